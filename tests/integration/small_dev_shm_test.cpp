// A small /dev/shm (Docker's 64 MiB, or 256 KiB) under 2 to 16 ranks: the
// shared-memory rings shrink to fit and the calls give right results, or
// init fails on every rank with a message that names /dev/shm's size and
// the fix; never a SIGBUS. Also with mclMemAlloc buffers at zero-copy
// sizes, which fit or fail with the room named. Needs root (a mount
// namespace with a small tmpfs over /dev/shm); skipped otherwise.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "expect_error.h"
#include "multiprocess.h"

namespace mcl::test {
namespace {

struct SmallShm {
  const char* size;  // tmpfs size= of /dev/shm
  int nranks;
  bool runs;  // false: not even the smallest rings fit
};

std::string caseName(const ::testing::TestParamInfo<SmallShm>& info) {
  return std::string(info.param.size) + "_" +
         std::to_string(info.param.nranks) + "ranks";
}

#if defined(__linux__)
// Sums rank + 1 + i over `count` floats, in place, and checks every element.
void checkAllReduce(RankContext& ctx, mclComm_t comm, float* data, size_t count,
                    const char* what) {
  for (size_t i = 0; i < count; ++i)
    data[i] = static_cast<float>(ctx.rank() + 1) + static_cast<float>(i % 7);
  if (!ctx.ok(
          mclAllReduce(data, data, count, mclFloat32, mclSum, comm, nullptr),
          what))
    return;
  const int n = ctx.nranks();
  for (size_t i = 0; i < count; ++i) {
    const float want = static_cast<float>(n * (n + 1) / 2) +
                       static_cast<float>(n) * static_cast<float>(i % 7);
    if (data[i] != want) {
      ctx.fail("%s: element %zu is %g, expected %g", what, i, double(data[i]),
               double(want));
      return;
    }
  }
}

// mclMemAlloc memory at a zero-copy size: it fits and the call runs in
// place, or the allocation fails and says how much room /dev/shm has.
void zeroCopyOrRoomNamed(RankContext& ctx, mclComm_t comm) {
  constexpr size_t kCount = 1 << 16;  // 256 KiB: over the zero-copy floor
  void* p = nullptr;
  const mclResult_t r = mclMemAlloc(&p, kCount * sizeof(float));
  if (r != mclSuccess) {
    expectError(ctx, r, mclSystemError, "mclMemAlloc with /dev/shm full",
                {"256.0 KiB", "/dev/shm has", "free of", "--shm-size"});
    return;
  }
  checkAllReduce(ctx, comm, static_cast<float*>(p), kCount,
                 "zero-copy all-reduce");
  ctx.ok(mclMemFree(p), "mclMemFree");
}

void runOrFailEverywhere(RankContext& ctx, const SmallShm& c) {
  mclConfig_t config = MCL_CONFIG_INITIALIZER;
  config.timeoutSeconds = 60;
  mclComm_t comm = nullptr;
  const mclResult_t r =
      mclCommInitRankConfig(&comm, ctx.nranks(), ctx.id(), ctx.rank(), &config);
  if (!c.runs) {
    const std::string ranks =
        "the " + std::to_string(c.nranks) + " ranks on this host";
    expectError(ctx, r, mclSystemError, "init with /dev/shm too small",
                {"/dev/shm is too small", ranks.c_str(), "df -h /dev/shm",
                 "--shm-size=", "fewer ranks per host", "MCL_TRANSPORT=tcp"});
    return;
  }
  if (!ctx.ok(r, "mclCommInitRankConfig")) return;
  for (size_t count : {size_t{2}, size_t{16} << 10, size_t{256} << 10}) {
    std::vector<float> data(count);
    checkAllReduce(ctx, comm, data.data(), count, "all-reduce");
  }
  // All-gather of 64 KiB blocks: every peer's ring at once.
  const size_t block = 16 << 10;
  std::vector<float> mine(block, float(ctx.rank()));
  std::vector<float> all(block * size_t(ctx.nranks()), -1.0F);
  if (ctx.ok(mclAllGather(mine.data(), all.data(), block, mclFloat32, comm,
                          nullptr),
             "all-gather"))
    for (size_t i = 0; i < all.size(); ++i)
      if (all[i] != float(i / block)) {
        ctx.fail("all-gather: element %zu is %g", i, double(all[i]));
        break;
      }
  zeroCopyOrRoomNamed(ctx, comm);
  ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
}

#endif

class SmallDevShm : public ::testing::TestWithParam<SmallShm> {};

TEST_P(SmallDevShm, ShrinksOrFailsEveryRankNeverASignal) {
#if defined(__linux__)
  if (geteuid() != 0) GTEST_SKIP() << "needs root for a mount namespace";
  const SmallShm c = GetParam();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string options = std::string("size=") + c.size;
    if (unshare(CLONE_NEWNS) != 0 ||
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("tmpfs", "/dev/shm", "tmpfs", 0, options.c_str()) != 0)
      _exit(77);
    // A rank that dies by a signal fails runRanks with the signal named.
    const bool ok = runRanks(
        c.nranks, [&](RankContext& ctx) { runOrFailEverywhere(ctx, c); },
        std::chrono::seconds(240));
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "signal " << WTERMSIG(status);
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "no mount namespace here";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the ranks failed (see above)";
#else
  GTEST_SKIP() << "Linux only (macOS has no /dev/shm to shrink)";
#endif
}

// 256 KiB holds the smallest rings of 4 ranks (4 segments of 24 KiB within
// three quarters of the room), not of 8 (8 of 44 KiB).
INSTANTIATE_TEST_SUITE_P(
    Sizes, SmallDevShm,
    ::testing::Values(SmallShm{"64m", 2, true}, SmallShm{"64m", 4, true},
                      SmallShm{"64m", 8, true}, SmallShm{"64m", 16, true},
                      SmallShm{"256k", 2, true}, SmallShm{"256k", 4, true},
                      SmallShm{"256k", 8, false}, SmallShm{"256k", 16, false}),
    caseName);

}  // namespace
}  // namespace mcl::test
