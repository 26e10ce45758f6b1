// Runs a test body in N forked processes, one per rank, and collects what
// each reports. A rank that fails, dies or hangs fails the test with its rank
// named; a hang is cut off after the bound, so no test can wait forever.
#pragma once

#include <gtest/gtest.h>
#include <mcl/mcl.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace mcl::test {

// What a rank's body sees.
class RankContext {
 public:
  RankContext(int rank, int nranks, const mclUniqueId& id)
      : rank_(rank), nranks_(nranks), id_(id) {}
  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  const mclUniqueId& id() const { return id_; }

  // Records a failure (printf-style); the rank keeps going.
  void fail(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  bool failed() const { return !failures_.empty(); }
  // Checks an mcl call; records "what: <code name>: <last error>".
  bool ok(mclResult_t result, const char* what);
  const std::string& failures() const { return failures_; }

 private:
  int rank_;
  int nranks_;
  mclUniqueId id_;
  std::string failures_;
  int failureCount_ = 0;
};

using RankBody = std::function<void(RankContext&)>;

// Forks nranks children running body, creates a unique id (its rendezvous
// root runs in this process) and hands it to them, waits up to bound.
// Passes when every rank finished without failures. In a LeakSanitizer
// build each rank checks for leaks before it exits (unless it was forked
// while other threads ran here, as runRanksWithId's ranks mostly are).
::testing::AssertionResult runRanks(
    int nranks, const RankBody& body,
    std::chrono::seconds bound = std::chrono::seconds(120));

// Same, with a caller-made id (to test bad ids).
::testing::AssertionResult runRanksWithId(int nranks, const mclUniqueId& id,
                                          const RankBody& body,
                                          std::chrono::seconds bound);

// Thread-per-rank mode: the same, with the ranks as threads of this
// process (several communicators in one process, as a framework driving
// several devices from one process would have). A hang past the bound fails
// the test and abandons the threads.
::testing::AssertionResult runRankThreads(
    int nranks, const RankBody& body,
    std::chrono::seconds bound = std::chrono::seconds(120));

// Whether this build runs under AddressSanitizer (and UBSan with it).
// Their checks read memory through a pipe: a test that leaves a process
// without descriptors would get false reports from them.
bool underSanitizers();

// Initialises a communicator for the rank or records the failure.
mclComm_t initComm(RankContext& ctx, int timeoutSeconds = 60);

}  // namespace mcl::test
