// Small checks shared by the error-path tests: an exact result code with a
// message that names the culprit, a communicator that still computes, and a
// stopwatch.
#pragma once

#include <mcl/mcl.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "multiprocess.h"

namespace mcl::test {

// Checks that `got` is `want` and that mclGetLastError mentions every
// string of `mentions`. Records a failure naming `what` otherwise.
inline bool expectError(RankContext& ctx, mclResult_t got, mclResult_t want,
                        const char* what,
                        std::initializer_list<const char*> mentions) {
  std::string message = mclGetLastError(nullptr);
  if (got != want) {
    ctx.fail("%s: returned %s, expected %s (last error: %s)", what,
             mclGetErrorString(got), mclGetErrorString(want), message.c_str());
    return false;
  }
  for (const char* m : mentions)
    if (message.find(m) == std::string::npos) {
      ctx.fail("%s: returned %s but the message does not mention '%s': %s",
               what, mclGetErrorString(got), m, message.c_str());
      return false;
    }
  return true;
}

// Runs an int32 sum all-reduce of rank + 1 (plus element index) and checks
// it, to show the communicator still works.
inline bool expectAllReduceWorks(RankContext& ctx, mclComm_t comm,
                                 const char* after) {
  int nranks = 0;
  if (!ctx.ok(mclCommCount(comm, &nranks), "mclCommCount")) return false;
  constexpr int kCount = 33;
  std::vector<int32_t> in(kCount), out(kCount, -1);
  for (int i = 0; i < kCount; ++i)
    in[static_cast<size_t>(i)] = ctx.rank() + 1 + i;
  mclResult_t r = mclAllReduce(in.data(), out.data(), kCount, mclInt32, mclSum,
                               comm, nullptr);
  if (r != mclSuccess) {
    ctx.fail("all-reduce after %s: %s: %s", after, mclGetErrorString(r),
             mclGetLastError(nullptr));
    return false;
  }
  for (int i = 0; i < kCount; ++i) {
    int32_t want = nranks * (nranks + 1) / 2 + nranks * i;
    if (out[static_cast<size_t>(i)] != want) {
      ctx.fail("all-reduce after %s: element %d is %d, expected %d", after, i,
               out[static_cast<size_t>(i)], want);
      return false;
    }
  }
  return true;
}

// An argument error, then proof that the communicator survived it.
inline void expectRejected(RankContext& ctx, mclComm_t comm, mclResult_t got,
                           const char* what,
                           std::initializer_list<const char*> mentions) {
  expectError(ctx, got, mclInvalidArgument, what, mentions);
  expectAllReduceWorks(ctx, comm, what);
}

inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace mcl::test
