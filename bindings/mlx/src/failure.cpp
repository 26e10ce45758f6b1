#include "failure.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "mpi_abi.h"

namespace mcl::mpi {

namespace {

bool errorsReturn() {
  const char* mode = getenv("MCL_MPI_ERRORS");
  return mode != nullptr && strcmp(mode, "return") == 0;
}

int classOf(mclResult_t result) {
  switch (result) {
    case mclInvalidArgument:
      return kErrArg;
    case mclInvalidUsage:
      return kErrOther;
    case mclInternalError:
      return kErrIntern;
    default:
      return kErrOther;
  }
}

}  // namespace

int fail(int code, const char* call, const std::string& what) {
  fprintf(stderr, "mcl (MLX's MPI library): %s: %s\n", call, what.c_str());
  if (errorsReturn()) return code;
  fprintf(stderr,
          "mcl (MLX's MPI library): ending this process (errors are fatal, "
          "as in Open MPI; MCL_MPI_ERRORS=return returns them instead)\n");
  fflush(stderr);
  fflush(stdout);
  // Not exit(): MLX's static groups would call MPI_Finalize on the way out,
  // which waits on the very peers that failed.
  _exit(1);
}

int failMcl(mclResult_t result, const char* call, mclComm_t comm,
            const std::string& arguments) {
  const std::string named =
      arguments.empty() ? call : std::string(call) + " (" + arguments + ")";
  std::string what = mclGetErrorString(result);
  const char* message = mclGetLastError(comm);
  if (message != nullptr && message[0] != '\0')
    what += ": " + std::string(message);
  return fail(classOf(result), named.c_str(), what);
}

}  // namespace mcl::mpi
