// macOS `ifconfig -a` (topology/ifconfig.h): MTU, carrier, bridge members
// and addresses from fixture text, and clear errors on text that is not
// ifconfig's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "topology/ifconfig.h"
#include "topology/subnet.h"
#include "topology_fixtures.h"

namespace mcl::topology {
namespace {

using mcl::testing::expectInvalid;
using mcl::testing::readFixture;

const IfconfigInterface* named(const std::vector<IfconfigInterface>& all,
                               const std::string& name) {
  for (const IfconfigInterface& i : all)
    if (i.name == name) return &i;
  return nullptr;
}

TEST(IfconfigTest, BridgeMembersMtuStatusAndAddresses) {
  auto all =
      parseIfconfig(readFixture("macos/mistakes/bridge_ring/ifconfig.txt"));
  ASSERT_EQ(all.size(), 7u);  // lo0 en0 en1 en2 en3 en4 bridge0
  const IfconfigInterface* bridge = named(all, "bridge0");
  ASSERT_NE(bridge, nullptr);
  EXPECT_EQ(bridge->members, (std::vector<std::string>{"en2", "en3", "en4"}));
  EXPECT_TRUE(bridge->up);
  EXPECT_EQ(bridge->mtu, 1500);
  ASSERT_EQ(bridge->addresses.size(), 1u);
  EXPECT_EQ(bridge->addresses[0].address, "169.254.77.10");
  EXPECT_EQ(bridge->addresses[0].prefixLength, 16);
  const IfconfigInterface* lo = named(all, "lo0");
  ASSERT_NE(lo, nullptr);
  EXPECT_EQ(lo->mtu, 16384);
  ASSERT_EQ(lo->addresses.size(), 3u);
  EXPECT_EQ(lo->addresses[2].address, "fe80::1");  // the %lo0 scope is cut
  EXPECT_EQ(lo->addresses[2].prefixLength, 64);
  EXPECT_TRUE(lo->carrier());  // RUNNING, no status line
  EXPECT_TRUE(named(all, "en2")->carrier());
  EXPECT_FALSE(named(all, "en4")->carrier());  // status: inactive
}

TEST(IfconfigTest, PointToPointAndOddLines) {
  auto all = parseIfconfig(
      "utun3: flags=8051<UP,POINTOPOINT,RUNNING,MULTICAST> mtu 1380\n"
      "\tinet 100.64.0.7 --> 100.64.0.7 netmask 0xffffffff\n"
      "\tsomething new: 42\n"
      "en9: flags=8822<BROADCAST,SMART,SIMPLEX,MULTICAST> mtu 1500\r\n"
      "\tinet 10.1.2.3 netmask 0xff00ff00\n"  // not a mask: skipped
      "\tstatus: inactive\n");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_TRUE(all[0].up);
  EXPECT_EQ(all[0].mtu, 1380);
  ASSERT_EQ(all[0].addresses.size(), 1u);
  EXPECT_EQ(all[0].addresses[0].prefixLength, 32);
  EXPECT_FALSE(all[1].up);
  EXPECT_FALSE(all[1].running);
  EXPECT_TRUE(all[1].addresses.empty());
  EXPECT_EQ(all[1].status, "inactive");
  EXPECT_TRUE(parseIfconfig("").empty());
  // A line blank in other ways than spaces and tabs (found by fuzzing).
  EXPECT_EQ(parseIfconfig("en0: flags=1<UP> mtu 1500\n\t\v\f\n").size(), 1u);
}

TEST(IfconfigTest, TextThatIsNotIfconfigsIsAnError) {
  expectInvalid([] { parseIfconfig("\tinet 10.0.0.1 netmask 0xff000000\n"); },
                "indented lines only", {"ifconfig", "no interface"});
  expectInvalid([] { parseIfconfig("en0: mtu 1500\n"); }, "no flags",
                {"ifconfig", "without flags", "en0: mtu 1500"});
}

TEST(IfconfigTest, PointToPointPeer) {
  EXPECT_EQ(pointToPointPeer("10.99.3.1", 30), "10.99.3.2");
  EXPECT_EQ(pointToPointPeer("10.99.3.2", 30), "10.99.3.1");
  EXPECT_EQ(pointToPointPeer("10.99.3.0", 30), "10.99.3.1");
  EXPECT_EQ(pointToPointPeer("10.99.3.4", 31), "10.99.3.5");
  EXPECT_EQ(pointToPointPeer("10.99.3.5", 31), "10.99.3.4");
  EXPECT_EQ(pointToPointPeer("fd00::1", 126), "fd00::2");
  EXPECT_EQ(pointToPointPeer("fd00::", 127), "fd00::1");
  EXPECT_EQ(pointToPointPeer("10.99.3.1", 24), "");
  EXPECT_EQ(pointToPointPeer("not an address", 30), "");
}

}  // namespace
}  // namespace mcl::topology
