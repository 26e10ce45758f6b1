// The doctor's host checks: each limit that binds a job of this shape is a
// finding naming the host, the figure and the fix; limits that do not bind,
// and inventories without limits (an older mcl's), say nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "topology/host_checks.h"

namespace mcl::topology {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

Cluster oneHost(int ranks, const HostLimits& limits, int cores = 8) {
  Cluster c;
  ClusterHost h;
  h.name = "mac1";
  for (int r = 0; r < ranks; ++r) h.ranks.push_back(r);
  h.hasInventory = true;
  h.inventory.limits = limits;
  h.inventory.machine.cores = cores;
  c.hosts.push_back(h);
  return c;
}

HostLimits roomy() {
  HostLimits l;
  l.known = true;
  l.shmKnown = true;
  l.shmTotalBytes = 1024 * kMiB;
  l.shmFreeBytes = 1000 * kMiB;
  l.openFiles = 1024;
  l.openFilesHard = 1048576;
  l.lockedBytes = HostLimits::kUnlimited;
  return l;
}

HostNeeds needs() {
  HostNeeds n;
  n.ringBytes = [](int ranks) {
    return uint64_t(ranks) * uint64_t(ranks) * 2 * 512 * 1024;
  };
  n.descriptorsPerRank = 12;
  return n;
}

std::vector<Finding> check(const Cluster& c) {
  std::vector<Finding> out;
  checkHostLimits(c, needs(), out);
  return out;
}

bool mentions(const Finding& f, const std::string& text) {
  return (f.what + f.why + f.fix).find(text) != std::string::npos;
}

TEST(HostChecks, RoomyHostSaysNothing) {
  EXPECT_TRUE(check(oneHost(4, roomy())).empty());
}

TEST(HostChecks, SmallDevShmNamesTheRoomTheRingsAndTheFix) {
  HostLimits l = roomy();
  l.shmTotalBytes = 64 * kMiB;  // 16 ranks want 256 MiB
  l.shmFreeBytes = 30 * kMiB;
  auto out = check(oneHost(16, l, 16));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, "info");
  EXPECT_TRUE(mentions(out[0], "host 0 (mac1)"));
  EXPECT_TRUE(mentions(out[0], "64.0 MiB (30.0 MiB free now)"));
  EXPECT_TRUE(mentions(out[0], "want 256.0 MiB"));
  EXPECT_TRUE(mentions(out[0], "--shm-size"));
  l.shmKnown = false;  // macOS: no bound to check
  EXPECT_TRUE(check(oneHost(16, l, 16)).empty());
}

TEST(HostChecks, LowDescriptorLimitWarnsWithHowToRaiseIt) {
  HostLimits l = roomy();
  l.openFiles = 64;  // under 8 communicators of 12
  auto out = check(oneHost(2, l));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, "warning");
  EXPECT_TRUE(mentions(out[0], "ulimit -n is 64"));
  EXPECT_TRUE(mentions(out[0], "more than 5 such communicators"));
  EXPECT_TRUE(mentions(out[0], "ulimit -n 1048576"));
  l.openFilesHard = 64;  // nothing to raise it to without root
  out = check(oneHost(2, l));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(mentions(out[0], "the hard limit is 64 too"));
}

TEST(HostChecks, LockedMemoryMattersOnlyWithRdmaDevices) {
  HostLimits l = roomy();
  l.lockedBytes = 8 * kMiB;
  EXPECT_TRUE(check(oneHost(2, l)).empty());
  Cluster c = oneHost(2, l);
  c.hosts[0].inventory.rdmaDevices.push_back({"rdma_en2", "en2", true});
  auto out = check(c);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(mentions(out[0], "ulimit -l is 8.0 MiB"));
}

TEST(HostChecks, MoreRanksThanCoresIsNamed) {
  auto out = check(oneHost(4, roomy(), 2));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(mentions(out[0], "runs 4 ranks on 2 cores"));
  EXPECT_TRUE(mentions(out[0], "at most 2 ranks"));
}

TEST(HostChecks, InventoryWithoutLimitsSaysNothing) {
  HostLimits unknown;  // known = false: an older mcl's inventory
  unknown.openFiles = 1;
  EXPECT_TRUE(check(oneHost(4, unknown, 8)).empty());
}

}  // namespace
}  // namespace mcl::topology
