// A failed call is never silent: MLX ignores the codes of every call but
// MPI_Init and MPI_Comm_split, so by default (as Open MPI's
// MPI_ERRORS_ARE_FATAL) a failure prints mcl's message, naming the call,
// its arguments and the rank, peer or link at fault, and ends the process
// with status 1. MCL_MPI_ERRORS=return prints the same and returns the
// error's class instead, for programs that check.
#pragma once

#include <mcl/mcl.h>

#include <string>

namespace mcl::mpi {

// Reports `what` about `call` and ends the process, or returns `code`.
int fail(int code, const char* call, const std::string& what);
// The same for a failed mcl call on comm (may be NULL): mcl's own message.
int failMcl(mclResult_t result, const char* call, mclComm_t comm,
            const std::string& arguments);

}  // namespace mcl::mpi
