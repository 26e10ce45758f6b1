// How mcl-perf and its ranks end: exit codes, and the one way an mcl call's
// failure is reported.
#pragma once

#include <mcl/mcl.h>

namespace mcl::perf {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,  // an mcl call or the system failed, or wrong results
  kExitUsage = 2,    // bad flags or values
  // A rank process (under -np) whose check found wrong elements; the
  // launcher turns it into kExitFailure without reporting the rank.
  kExitWrongData = 3,
};

// Flushes stdio and ends the process at once: no atexit handlers or static
// destructors, which in a forked rank could touch library state (threads)
// that only the parent has.
[[noreturn]] void exitNow(int code);

// Prints "mcl-perf: rank R: <call> failed: <mclGetErrorString>
// (<mclGetLastError>)", aborts comm when given, and exits kExitFailure.
[[noreturn]] void dieOnMclError(int rank, const char* call, mclResult_t result,
                                mclComm_t comm);

inline void checkMcl(int rank, const char* call, mclResult_t result,
                     mclComm_t comm) {
  if (result != mclSuccess) dieOnMclError(rank, call, result, comm);
}

}  // namespace mcl::perf
