// Subnets as text (topology/subnet.h): what matches the two ends of a cable.
#include <gtest/gtest.h>

#include "topology/subnet.h"

namespace mcl::topology {
namespace {

TEST(TopologySubnetTest, Ipv4) {
  EXPECT_EQ(subnetOf("10.77.3.1", 30), "10.77.3.0/30");
  EXPECT_EQ(subnetOf("10.77.3.2", 30), "10.77.3.0/30");
  EXPECT_EQ(subnetOf("10.77.3.5", 30), "10.77.3.4/30");
  EXPECT_EQ(subnetOf("10.77.3.7", 31), "10.77.3.6/31");
  EXPECT_EQ(subnetOf("192.168.1.200", 24), "192.168.1.0/24");
  EXPECT_EQ(subnetOf("172.31.255.1", 12), "172.16.0.0/12");
  EXPECT_EQ(subnetOf("10.1.2.3", 32), "10.1.2.3/32");
  EXPECT_EQ(subnetOf("10.1.2.3", 0), "0.0.0.0/0");
}

TEST(TopologySubnetTest, Ipv6) {
  EXPECT_EQ(subnetOf("fd00::1", 126), "fd00::/126");
  EXPECT_EQ(subnetOf("fd00::5", 126), "fd00::4/126");
  EXPECT_EQ(subnetOf("fd00:77::3", 127), "fd00:77::2/127");
  EXPECT_EQ(subnetOf("2001:db8:1:2:3:4:5:6", 64), "2001:db8:1:2::/64");
  EXPECT_EQ(subnetOf("2001:db8:abcd::1", 36), "2001:db8:a000::/36");
  EXPECT_EQ(subnetOf("FD00::1", 128), "fd00::1/128");
}

TEST(TopologySubnetTest, BadInputIsEmpty) {
  EXPECT_EQ(subnetOf("", 24), "");
  EXPECT_EQ(subnetOf("not an address", 24), "");
  EXPECT_EQ(subnetOf("10.0.0", 24), "");
  EXPECT_EQ(subnetOf("10.0.0.256", 24), "");
  EXPECT_EQ(subnetOf("mac0.local", 24), "");
  EXPECT_EQ(subnetOf("10.0.0.1", 33), "");
  EXPECT_EQ(subnetOf("10.0.0.1", -1), "");
  EXPECT_EQ(subnetOf("fd00::1", 129), "");
  EXPECT_EQ(subnetOf("fd00:::1", 64), "");
  EXPECT_EQ(subnetOf("fe80::1%en0", 64), "");
}

TEST(TopologySubnetTest, PointToPointPrefix) {
  EXPECT_TRUE(isPointToPointPrefix("10.0.0.1", 30));
  EXPECT_TRUE(isPointToPointPrefix("10.0.0.1", 31));
  EXPECT_FALSE(isPointToPointPrefix("10.0.0.1", 29));
  EXPECT_FALSE(isPointToPointPrefix("10.0.0.1", 32));
  EXPECT_FALSE(isPointToPointPrefix("10.0.0.1", 24));
  EXPECT_TRUE(isPointToPointPrefix("fd00::1", 126));
  EXPECT_TRUE(isPointToPointPrefix("fd00::1", 127));
  EXPECT_FALSE(isPointToPointPrefix("fd00::1", 125));
  EXPECT_FALSE(isPointToPointPrefix("fd00::1", 128));
  EXPECT_FALSE(isPointToPointPrefix("fd00::1", 64));
  // An IPv6 address is judged by IPv6 widths, not IPv4 ones.
  EXPECT_FALSE(isPointToPointPrefix("fd00::1", 30));
  EXPECT_FALSE(isPointToPointPrefix("fd00::1", 31));
}

TEST(TopologySubnetTest, LinkLocal) {
  EXPECT_TRUE(isLinkLocal("169.254.0.1"));
  EXPECT_TRUE(isLinkLocal("169.254.255.254"));
  EXPECT_FALSE(isLinkLocal("169.253.1.1"));
  EXPECT_FALSE(isLinkLocal("169.2541.1.1"));
  EXPECT_FALSE(isLinkLocal("10.0.0.1"));
  EXPECT_FALSE(isLinkLocal("192.168.1.1"));
  EXPECT_TRUE(isLinkLocal("fe80::1"));
  EXPECT_TRUE(isLinkLocal("FE80::1c2a:3bff:fe4d:5e6f"));
  EXPECT_TRUE(isLinkLocal("febf::1"));  // fe80::/10 ends at febf
  EXPECT_FALSE(isLinkLocal("fec0::1"));
  EXPECT_FALSE(isLinkLocal("fd00::1"));
  EXPECT_FALSE(isLinkLocal("2001:db8::1"));
  EXPECT_FALSE(isLinkLocal(""));
}

}  // namespace
}  // namespace mcl::topology
