#include "common/mcl_error.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "common/kill_drill.h"

namespace mcl::perf {

void exitNow(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);
}

void dieOnMclError(int rank, const char* call, mclResult_t result,
                   mclComm_t comm) {
  // Copy the message first: it is only valid until the next mcl call.
  const char* last = mclGetLastError(comm);
  const std::string detail = last ? last : "";
  const char* text = mclGetErrorString(result);
  // rank < 0: not known yet (a launcher's rank before init).
  std::string who = rank >= 0 ? "rank " + std::to_string(rank) + ": " : "";
  std::fprintf(stderr, "mcl-perf: %s%s failed: %s (%s)\n", who.c_str(), call,
               text ? text : "unknown error", detail.c_str());
  reportKillDrill(rank);
  if (comm != nullptr) mclCommAbort(comm);
  exitNow(kExitFailure);
}

}  // namespace mcl::perf
