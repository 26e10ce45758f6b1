// RDMA teardown on the emulated fabric: 1000 init/destroy cycles leave no
// queue pair wire (shared memory), descriptor, thread or mapping behind.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "expect_error.h"
#include "multiprocess.h"
#include "process_census.h"

namespace mcl::test {
namespace {

#if defined(__linux__)
TEST(RdmaLifecycle, ThousandInitDestroyCyclesLeakNothing) {
  // In batches: each unique id holds a listening socket until its
  // communicator is built, and a process has only so many descriptors.
  constexpr int kBatches = 10;
  constexpr int kCyclesPerBatch = 100;
  const std::string fabric = std::string(MCL_FIXTURE_DIR) + "/rdma/pair2.json";
  std::set<std::string> shmBefore = listDir("/dev/shm", "mcl-");
  for (int batch = 0; batch < kBatches; ++batch) {
    std::vector<mclUniqueId> ids(kCyclesPerBatch);
    for (auto& id : ids) ASSERT_EQ(mclGetUniqueId(&id), mclSuccess);
    auto body = [&](RankContext& ctx) {
      setenv("MCL_TRANSPORT", "rdma", 1);
      setenv("MCL_RDMA_PROVIDER", "emu", 1);
      setenv("MCL_EMU_FABRIC", fabric.c_str(), 1);
      mclConfig_t config = MCL_CONFIG_INITIALIZER;
      config.timeoutSeconds = 10;
      ProcessCensus first;
      for (int i = 0; i < kCyclesPerBatch && !ctx.failed(); ++i) {
        mclComm_t comm = nullptr;
        if (!ctx.ok(mclCommInitRankConfig(&comm, 2, ids[size_t(i)], ctx.rank(),
                                          &config),
                    "init"))
          return;
        if (i % 25 == 0) expectAllReduceWorks(ctx, comm, "a fresh init");
        ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
        if (mappedSegments() != 0)
          ctx.fail("cycle %d: %d segments still mapped after destroy", i,
                   mappedSegments());
        if (i == 0) first = ProcessCensus::take();
      }
      std::string change = first.changeTo(ProcessCensus::take());
      if (!change.empty())
        ctx.fail("from the first cycle to the last: %s", change.c_str());
    };
    ASSERT_TRUE(runRanksWithId(2, ids[0], body, std::chrono::seconds(120)))
        << "batch " << batch;
  }
  for (const auto& name : listDir("/dev/shm", "mcl-e-"))
    if (shmBefore.count(name) == 0) ADD_FAILURE() << "leaked /dev/shm/" << name;
}
#endif

}  // namespace
}  // namespace mcl::test
