// Shared-memory rings are reserved in /dev/shm at init. Where /dev/shm is
// too small for every ring (Docker's 64 MiB with 8 ranks), init warns and
// goes on with pages taken at first use: the calls still run. Needs root
// (a mount namespace with a small tmpfs over /dev/shm); skipped otherwise.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "multiprocess.h"

namespace mcl::test {
namespace {

TEST(ShmReservation, TooSmallDevShmStillRuns) {
#if defined(__linux__)
  if (geteuid() != 0) GTEST_SKIP() << "needs root for a mount namespace";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Each rank's rings take 4.2 MB, more than the 4 MiB there is; what
    // they touch fits.
    if (unshare(CLONE_NEWNS) != 0 ||
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=4m") != 0)
      _exit(77);
    const bool ok = runRanks(4, [](RankContext& ctx) {
      mclComm_t comm = initComm(ctx, 30);
      if (comm == nullptr) return;
      std::vector<int32_t> x(1000, ctx.rank() + 1);
      if (ctx.ok(mclAllReduce(x.data(), x.data(), x.size(), mclInt32, mclSum,
                              comm, nullptr),
                 "all-reduce") &&
          x[999] != 10)
        ctx.fail("sum %d, want 10", x[999]);
      ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
    });
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "no mount namespace here";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the ranks failed (see above)";
#else
  GTEST_SKIP() << "Linux only";
#endif
}

}  // namespace
}  // namespace mcl::test
