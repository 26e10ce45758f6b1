// mcl's C API for the backend: the table the package's native module
// hands out (bindings/python/src/c_api_table.h), so the process runs one
// copy of the library, and the helpers that turn its results into errors.
#pragma once

#include <mcl/mcl.h>

#include <string>

#include "c_api_table.h"

namespace mcl::torch_backend {

// The table, fetched from mcl._mcl the first time (the GIL must be held
// then); throws ImportError-like errors when the module's table is of
// another version.
const python::CApiTable& api();

// Throws the backend error for a failed call `what` on comm: mcl's own
// text (mclGetLastError), "Timed out after N s (the group's timeout)" for
// a timeout, as the Python backend says it.
void check(mclResult_t result, mclComm_t comm, const char* what,
           int timeoutSeconds);

// The message check() would throw.
std::string failureText(mclResult_t result, mclComm_t comm, const char* what,
                        int timeoutSeconds);

}  // namespace mcl::torch_backend
