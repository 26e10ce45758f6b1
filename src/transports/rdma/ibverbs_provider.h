// The `ibverbs` provider: the system's verbs library (Apple's librdma.dylib
// on macOS 26.2+, rdma-core's libibverbs.so.1 on Linux), loaded with dlopen
// so that mcl links and runs where it is absent. Built only when the verbs
// header exists (MCL_HAVE_VERBS).
#pragma once

#include <memory>
#include <string>

#include "transports/rdma/verbs.h"

namespace mcl::transport::rdma {

// Loads `library` ("" = the platform's default) and resolves the verbs mcl
// calls. Throws mcl::Error (mclSystemError) naming the library and how to
// get RDMA when it cannot be loaded, or the symbol it lacks.
std::unique_ptr<Provider> openIbverbsProvider(const std::string& library);

}  // namespace mcl::transport::rdma
