// Linux /sys/bus/thunderbolt snapshots (topology/thunderbolt_linux.h): the
// parser on in-memory snapshots, and the reader on fixture directory trees
// (tests/fixtures/topology/linux) that mimic sysfs.
#include <gtest/gtest.h>

#include <string>

#include "topology/thunderbolt_linux.h"
#include "topology_fixtures.h"

namespace mcl::topology {
namespace {

using mcl::testing::expectInvalid;
using mcl::testing::fixturePath;

TEST(ThunderboltSysfsTest, ReadsAndParsesTwoRemoteHosts) {
  SysfsSnapshot snap = readThunderboltSysfs(fixturePath("linux/two_hosts"));
  EXPECT_EQ(snap.at("0-1/rx_speed"), "40.0 Gb/s\n");
  EXPECT_EQ(snap.count("0-1.1/key"), 1u);

  auto hosts = parseThunderboltSysfs(snap);
  // 0-0 is this machine's own router and domain0 the domain: not hosts.
  ASSERT_EQ(hosts.size(), 2u);
  const XDomainHost& mac = hosts[0];
  EXPECT_EQ(mac.entry, "0-1");
  EXPECT_EQ(mac.deviceName, "Mac Studio");
  EXPECT_EQ(mac.vendorName, "Apple Inc.");
  EXPECT_EQ(mac.uniqueId, "7b9e2c10-3a41-4f55-8d62-0c1e5a7b3d21");
  EXPECT_DOUBLE_EQ(mac.rxGbps, 40.0);
  EXPECT_DOUBLE_EQ(mac.txGbps, 40.0);
  EXPECT_EQ(mac.rxLanes, 2);
  EXPECT_EQ(mac.txLanes, 2);
  EXPECT_TRUE(mac.networkService);

  // Found through its service alone (no uevent); the service is not IP.
  const XDomainHost& node = hosts[1];
  EXPECT_EQ(node.entry, "0-3");
  EXPECT_EQ(node.deviceName, "linux-node-7");
  EXPECT_DOUBLE_EQ(node.rxGbps, 20.0);
  EXPECT_EQ(node.rxLanes, 1);
  EXPECT_FALSE(node.networkService);
}

TEST(ThunderboltSysfsTest, MissingDirectoryIsEmpty) {
  EXPECT_TRUE(readThunderboltSysfs(fixturePath("linux/no_such_dir")).empty());
  EXPECT_TRUE(parseThunderboltSysfs({}).empty());
}

TEST(ThunderboltSysfsTest, MissingSpeedsAreZero) {
  auto hosts =
      parseThunderboltSysfs({{"1-2/uevent", "DEVTYPE=thunderbolt_xdomain\n"},
                             {"1-2/unique_id", "u"}});
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0].rxGbps, 0);
  EXPECT_EQ(hosts[0].txLanes, 0);
  EXPECT_EQ(hosts[0].deviceName, "");
}

TEST(ThunderboltSysfsTest, MalformedTreesAreInvalid) {
  expectInvalid(
      [] {
        parseThunderboltSysfs(
            readThunderboltSysfs(fixturePath("linux/bad_speed")));
      },
      "bad speed", {"thunderbolt sysfs", "0-1/rx_speed", "\"fast\""});
  expectInvalid(
      [] {
        parseThunderboltSysfs(
            readThunderboltSysfs(fixturePath("linux/bad_lanes")));
      },
      "bad lanes", {"thunderbolt sysfs", "0-1/rx_lanes", "\"two\""});
  expectInvalid(
      [] {
        parseThunderboltSysfs(
            readThunderboltSysfs(fixturePath("linux/no_unique_id")));
      },
      "no unique id", {"thunderbolt sysfs", "0-1/unique_id"});
}

TEST(ThunderboltSysfsTest, SpeedNeedsItsUnit) {
  for (const char* bad : {"40.0", "40.0 GB/s", "-5 Gb/s", "Gb/s", ""}) {
    SysfsSnapshot snap = {{"0-1/uevent", "DEVTYPE=thunderbolt_xdomain"},
                          {"0-1/unique_id", "u"},
                          {"0-1/tx_speed", bad}};
    expectInvalid([&] { parseThunderboltSysfs(snap); }, bad, {"0-1/tx_speed"});
  }
}

// Enough digits overflow to infinity, which inventoryToJson writes as null:
// the other ranks could not read this host's inventory.
TEST(ThunderboltSysfsTest, SpeedMustBeFinite) {
  SysfsSnapshot snap = {{"0-1/uevent", "DEVTYPE=thunderbolt_xdomain"},
                        {"0-1/unique_id", "u"},
                        {"0-1/rx_speed", std::string(400, '9') + " Gb/s"}};
  expectInvalid([&] { parseThunderboltSysfs(snap); }, "400 digits",
                {"0-1/rx_speed"});
}

}  // namespace
}  // namespace mcl::topology
