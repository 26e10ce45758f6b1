#include "init_destroy_cycles.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iterator>
#include <set>
#include <string>
#include <thread>

#include "expect_error.h"
#include "multiprocess.h"
#include "process_census.h"

namespace mcl::test {

#if defined(__linux__)
namespace {

// Rank 1 waits for rank 0's next id, at most `seconds` (rank 0 may have
// stopped at a failure).
bool readId(int fd, mclUniqueId* id, int seconds) {
  pollfd p = {fd, POLLIN, 0};
  if (poll(&p, 1, seconds * 1000) != 1) return false;
  return read(fd, id, sizeof(*id)) == static_cast<ssize_t>(sizeof(*id));
}

}  // namespace

void expectInitDestroyCyclesLeakNothing(const InitDestroyCycles& run) {
  const std::set<std::string> shmBefore =
      listDir("/dev/shm", run.shmPrefix.c_str());
  const size_t fdsBefore = countEntries("/proc/self/fd");
  // Rank 0 hands each id to rank 1 through a pipe (an id is far smaller
  // than PIPE_BUF, so each write arrives whole).
  int ids[2];
  ASSERT_EQ(pipe(ids), 0);
  auto body = [&](RankContext& ctx) {
    close(ctx.rank() == 0 ? ids[0] : ids[1]);
    const int channel = ctx.rank() == 0 ? ids[1] : ids[0];
    if (run.setup) run.setup();
    mclConfig_t config = MCL_CONFIG_INITIALIZER;
    config.timeoutSeconds = run.timeoutSeconds;
    ProcessCensus first;
    for (int i = 0; i < run.cycles && !ctx.failed(); ++i) {
      mclUniqueId id;
      if (ctx.rank() == 0) {
        if (!ctx.ok(mclGetUniqueId(&id), "mclGetUniqueId")) break;
        if (write(channel, &id, sizeof(id)) !=
            static_cast<ssize_t>(sizeof(id))) {
          ctx.fail("cycle %d: the id did not reach rank 1", i);
          break;
        }
      } else if (!readId(channel, &id, run.timeoutSeconds + 5)) {
        ctx.fail("cycle %d: no id from rank 0", i);
        break;
      }
      mclComm_t comm = nullptr;
      if (!ctx.ok(mclCommInitRankConfig(&comm, 2, id, ctx.rank(), &config),
                  "init"))
        break;
      if (i % run.allReduceEvery == 0)
        expectAllReduceWorks(ctx, comm, "a fresh init");
      if (run.mapsSegments && mappedSegments() == 0)
        ctx.fail("cycle %d: no mcl segment mapped while live", i);
      ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
      if (mappedSegments() != 0)
        ctx.fail("cycle %d: %d mcl segments still mapped after destroy", i,
                 mappedSegments());
      // The first cycle may set up process-wide state.
      if (i == 0) first = settledCensus(nullptr);
    }
    const ProcessCensus last = settledCensus(&first);
    std::string change = first.changeTo(last);
    if (!change.empty())
      ctx.fail("from the first cycle to the last: %s", change.c_str());
    else if (!ctx.failed())
      printf(
          "rank %d: %zu descriptors and %zu threads after cycle 1 and "
          "after cycle %d\n",
          ctx.rank(), last.fds, last.threads, run.cycles);
    fflush(stdout);
    close(channel);
  };
  mclUniqueId unused = {};  // rank 0 makes the ids
  EXPECT_TRUE(runRanksWithId(2, unused, body, run.bound));
  close(ids[0]);
  close(ids[1]);
  // Segments of other jobs on this machine come and go: only one that stays
  // is a leak.
  std::set<std::string> leaked;
  for (const auto& name : listDir("/dev/shm", run.shmPrefix.c_str()))
    if (shmBefore.count(name) == 0) leaked.insert(name);
  if (!leaked.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    std::set<std::string> now = listDir("/dev/shm", run.shmPrefix.c_str());
    for (auto it = leaked.begin(); it != leaked.end();)
      it = now.count(*it) ? std::next(it) : leaked.erase(it);
  }
  for (const auto& name : leaked) ADD_FAILURE() << "leaked /dev/shm/" << name;
  EXPECT_EQ(countEntries("/proc/self/fd"), fdsBefore);
}
#endif

}  // namespace mcl::test
