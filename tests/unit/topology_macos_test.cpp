// Parsing macOS's own descriptions of Thunderbolt ports: system_profiler
// JSON and networksetup text, on invented fixtures shaped like the real
// output (tests/fixtures/topology/macos).
#include <gtest/gtest.h>

#include <string>

#include "topology/networksetup.h"
#include "topology/thunderbolt_macos.h"
#include "topology_fixtures.h"

namespace mcl::topology {
namespace {

using mcl::testing::expectInvalid;
using mcl::testing::readFixture;

std::string portUuid(const char* hostTag, int receptacle) {
  return std::string(hostTag) + "-7C1E-4B2A-9D3F-A0B1C2D3000" +
         std::to_string(receptacle);
}

TEST(SystemProfilerTest, MeshMacListsEveryPortAndItsPeer) {
  auto ports =
      parseSystemProfilerThunderbolt(readFixture("macos/mesh4/mac0.json"));
  ASSERT_EQ(ports.size(), 6u);
  for (int r = 1; r <= 6; ++r) {
    const ThunderboltPort& p = ports[r - 1];
    EXPECT_EQ(p.receptacle, r);
    EXPECT_EQ(p.uuid, portUuid("3F20A100", r));
    EXPECT_EQ(p.busName, "thunderboltusb4_bus_" + std::to_string(r - 1));
    EXPECT_EQ(p.speedText, "Up to 80 Gb/s");
    EXPECT_EQ(p.speedGbps, 80);
    EXPECT_EQ(p.generation, 5);
    EXPECT_EQ(p.deviceName, "Mac Studio");
  }
  // Receptacle 1 goes to mac1's receptacle 3: the peer's UUID is *its* port.
  ASSERT_EQ(ports[0].peers.size(), 1u);
  EXPECT_EQ(ports[0].peers[0].uuid, portUuid("3F20B211", 3));
  EXPECT_EQ(ports[0].peers[0].name, "Mac Studio");
  EXPECT_EQ(ports[0].peers[0].vendor, "Apple Inc.");
  EXPECT_TRUE(ports[0].peers[0].direct());
  EXPECT_EQ(ports[0].linkStatus, "0x2");
  // Receptacle 4 is the second cable to mac1 (its receptacle 1).
  ASSERT_EQ(ports[3].peers.size(), 1u);
  EXPECT_EQ(ports[3].peers[0].uuid, portUuid("3F20B211", 1));
  // Receptacle 5 has a drive: a peer without a UUID.
  ASSERT_EQ(ports[4].peers.size(), 1u);
  EXPECT_EQ(ports[4].peers[0].uuid, "");
  EXPECT_EQ(ports[4].peers[0].name, "Portable SSD");
  // Receptacle 6 is empty.
  EXPECT_TRUE(ports[5].peers.empty());
  EXPECT_EQ(ports[5].linkStatus, "0x7");
}

TEST(SystemProfilerTest, KeepsTheOrderTheBusesAreListedIn) {
  // mac2's file lists receptacle 3 first; the receptacle comes from the
  // field, not the position.
  auto ports =
      parseSystemProfilerThunderbolt(readFixture("macos/mesh4/mac2.json"));
  ASSERT_EQ(ports.size(), 6u);
  EXPECT_EQ(ports[0].receptacle, 3);
  EXPECT_EQ(ports[0].uuid, portUuid("3F20C322", 3));
  EXPECT_EQ(ports[1].receptacle, 1);
}

TEST(SystemProfilerTest, RingMacHasThreePortsTwoConnected) {
  auto ports =
      parseSystemProfilerThunderbolt(readFixture("macos/ring4/mac1.json"));
  ASSERT_EQ(ports.size(), 3u);
  EXPECT_EQ(ports[0].deviceName, "Mac mini");
  ASSERT_EQ(ports[0].peers.size(), 1u);  // receptacle 1 -> mac2 receptacle 2
  EXPECT_EQ(ports[0].peers[0].uuid, portUuid("3F20C322", 2));
  ASSERT_EQ(ports[1].peers.size(), 1u);  // receptacle 2 -> mac0 receptacle 1
  EXPECT_EQ(ports[1].peers[0].uuid, portUuid("3F20A100", 1));
  EXPECT_TRUE(ports[2].peers.empty());
}

TEST(SystemProfilerTest, HubNestsPeersAndTb4PortIsGeneration4) {
  auto ports =
      parseSystemProfilerThunderbolt(readFixture("macos/hub/hub_host.json"));
  ASSERT_EQ(ports.size(), 3u);
  const ThunderboltPort& tb4 = ports[0];
  EXPECT_EQ(tb4.speedText, "Up to 40 Gb/s");
  EXPECT_EQ(tb4.speedGbps, 40);
  EXPECT_EQ(tb4.generation, 4);
  // Depth-first: the dock, then what hangs off it.
  ASSERT_EQ(tb4.peers.size(), 3u);
  EXPECT_EQ(tb4.peers[0].name, "TB4 Dock");
  EXPECT_EQ(tb4.peers[0].depth, 1);
  EXPECT_EQ(tb4.peers[0].uuid, "D0C4D0C4-2222-4333-8444-555566667777");
  EXPECT_EQ(tb4.peers[1].name, "Mac mini");
  EXPECT_EQ(tb4.peers[1].depth, 2);
  EXPECT_FALSE(tb4.peers[1].direct());
  EXPECT_EQ(tb4.peers[1].uuid, "5B0B0B0B-7C1E-4B2A-9D3F-A0B1C2D30001");
  EXPECT_EQ(tb4.peers[2].name, "Portable SSD");
  EXPECT_EQ(tb4.peers[2].depth, 2);
  // The TB5 port has a Mac straight on it.
  EXPECT_EQ(ports[1].generation, 5);
  ASSERT_EQ(ports[1].peers.size(), 1u);
  EXPECT_TRUE(ports[1].peers[0].direct());
}

TEST(SystemProfilerTest, NoBusesIsAnEmptyList) {
  EXPECT_TRUE(parseSystemProfilerThunderbolt(R"({"SPThunderboltDataType": []})")
                  .empty());
}

TEST(SystemProfilerTest, SpeedText) {
  EXPECT_EQ(parseSpeedGbps("Up to 80 Gb/s"), 80);
  EXPECT_EQ(parseSpeedGbps("Up to 40 Gb/s"), 40);
  EXPECT_EQ(parseSpeedGbps("40Gb/s"), 40);
  EXPECT_EQ(parseSpeedGbps(""), 0);
  EXPECT_EQ(parseSpeedGbps("Up to 10 GT/s"), 0);
  EXPECT_EQ(parseSpeedGbps("Gb/s"), 0);
}

struct BadInput {
  const char* file;
  const char* mention;  // the place or defect the message must name
};

class SystemProfilerMalformedTest : public ::testing::TestWithParam<BadInput> {
};

TEST_P(SystemProfilerMalformedTest, GivesInvalidArgumentNamingTheProblem) {
  std::string text =
      readFixture(std::string("macos/malformed/") + GetParam().file);
  expectInvalid([&] { parseSystemProfilerThunderbolt(text); }, GetParam().file,
                {"system_profiler JSON", GetParam().mention});
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, SystemProfilerMalformedTest,
    ::testing::Values(
        BadInput{"sp_truncated.json", "cut short"},
        BadInput{
            "sp_items_not_list.json",
            "SPThunderboltDataType[1]._items should be a list, not string"},
        BadInput{"sp_missing_uuid.json",
                 "SPThunderboltDataType[2] has no \"domain_uuid_key\""},
        BadInput{"sp_receptacle_is_number.json",
                 "receptacle_1_tag.receptacle_id_key should be a string, not "
                 "number"},
        BadInput{"sp_receptacle_not_a_number.json", "not \"left\""},
        BadInput{"sp_missing_receptacle_tag.json",
                 "SPThunderboltDataType[3] has no \"receptacle_1_tag\""},
        BadInput{"sp_peer_uuid_is_number.json",
                 "SPThunderboltDataType[0]._items[0].domain_uuid_key should "
                 "be a string"},
        BadInput{"sp_duplicate_receptacle.json", "both receptacle 1"},
        BadInput{"sp_no_thunderbolt_key.json", "no \"SPThunderboltDataType\""},
        BadInput{"sp_buses_not_list.json", "should be a list, not object"},
        BadInput{"sp_top_is_list.json", "top level should be an object"}));

TEST(SystemProfilerTest, EmptyAndGarbageTextAreInvalid) {
  expectInvalid([] { parseSystemProfilerThunderbolt(""); }, "empty",
                {"system_profiler JSON", "the text is empty"});
  expectInvalid([] { parseSystemProfilerThunderbolt("No Thunderbolt"); },
                "garbage",
                {"system_profiler JSON", "not valid JSON: line 1, column 1"});
}

TEST(SystemProfilerTest, AbsurdNestingIsRejected) {
  std::string items = "[]";
  for (int i = 0; i < 40; ++i)
    items = R"([{"_name": "hub", "_items": )" + items + "}]";
  std::string text =
      R"({"SPThunderboltDataType": [{"domain_uuid_key": "U",
          "receptacle_1_tag": {"receptacle_id_key": "1"}, "_items": )" +
      items + "}]}";
  expectInvalid([&] { parseSystemProfilerThunderbolt(text); }, "deep",
                {"system_profiler JSON", "nests deeper"});
}

TEST(NetworksetupTest, MapsThunderboltPortsToInterfaces) {
  HardwarePorts hw =
      parseNetworksetupPorts(readFixture("macos/mesh4/mac2.networksetup.txt"));
  EXPECT_FALSE(hw.bridgePresent);
  ASSERT_EQ(hw.thunderbolt.size(), 6u);
  for (int n = 1; n <= 6; ++n) {
    EXPECT_EQ(hw.thunderbolt.at(n), "en" + std::to_string(n + 2));
  }
}

TEST(NetworksetupTest, ByPortNumberNotByListOrder) {
  // mac1 lists Thunderbolt 3 first.
  HardwarePorts hw =
      parseNetworksetupPorts(readFixture("macos/mesh4/mac1.networksetup.txt"));
  ASSERT_EQ(hw.thunderbolt.size(), 6u);
  EXPECT_EQ(hw.thunderbolt.at(1), "en2");
  EXPECT_EQ(hw.thunderbolt.at(3), "en4");
  EXPECT_EQ(hw.thunderbolt.at(6), "en7");
}

TEST(NetworksetupTest, ReportsTheBridgeApart) {
  HardwarePorts hw =
      parseNetworksetupPorts(readFixture("macos/bridge/networksetup.txt"));
  EXPECT_TRUE(hw.bridgePresent);
  EXPECT_EQ(hw.bridgeDevice, "bridge0");
  ASSERT_EQ(hw.thunderbolt.size(), 3u);  // the bridge is not a port
  EXPECT_EQ(hw.thunderbolt.at(3), "en4");
}

TEST(NetworksetupTest, NoThunderboltIsEmpty) {
  HardwarePorts hw = parseNetworksetupPorts(
      "Hardware Port: Wi-Fi\nDevice: en0\nEthernet Address: x\n");
  EXPECT_TRUE(hw.thunderbolt.empty());
  EXPECT_FALSE(hw.bridgePresent);
  EXPECT_TRUE(parseNetworksetupPorts("").thunderbolt.empty());
}

TEST(NetworksetupTest, ToleratesCarriageReturnsAndNoFinalNewline) {
  HardwarePorts hw = parseNetworksetupPorts(
      "Hardware Port: Thunderbolt 2\r\nDevice: en3\r\nEthernet Address: x");
  EXPECT_EQ(hw.thunderbolt.at(2), "en3");
}

// "Thunderbolt" without a number is an adapter, not a port: the Ethernet
// one counts as Ethernet, the rest is left out, and the ports still map.
TEST(NetworksetupTest, UnnumberedThunderboltNamesAreNotPorts) {
  HardwarePorts hw =
      parseNetworksetupPorts(readFixture("macos/adapters.networksetup.txt"));
  EXPECT_EQ(hw.thunderbolt.size(), 1u);
  EXPECT_EQ(hw.thunderbolt.at(3), "en4");
  EXPECT_EQ(hw.ethernet.count("en9"), 1u);
  EXPECT_EQ(hw.ethernet.count("en2"), 0u);
}

TEST(NetworksetupTest, MalformedTextIsInvalid) {
  expectInvalid(
      [] {
        parseNetworksetupPorts(
            readFixture("macos/malformed/networksetup_truncated.txt"));
      },
      "truncated",
      {"networksetup output", "line 10",
       "\"Thunderbolt 2\" has no \"Device:\""});
  expectInvalid(
      [] {
        parseNetworksetupPorts(
            readFixture("macos/malformed/networksetup_duplicate.txt"));
      },
      "duplicate", {"networksetup output", "\"Thunderbolt 1\" appears twice"});
  expectInvalid([] { parseNetworksetupPorts("Device: en2\n"); }, "device first",
                {"networksetup output", "line 1"});
}

}  // namespace
}  // namespace mcl::topology
