// Which cables RDMA uses between two ranks (transports/rdma/rdma_wire_plan.h):
// every usable cable of the cluster picture, in an order both ends agree on
// however each Mac lists its ports; and for a pair it cannot use, a verdict
// that says why, naming the rank, the device and the cable: NoPath when no
// cable joins the two, Broken when cables are there and RDMA cannot use them.
#include "transports/rdma/rdma_wire_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "topology_inventory_builders.h"

namespace mcl::transport::rdma {
namespace {

using mcl::testing::addressCables;
using mcl::testing::cable;
using mcl::testing::macInventories;
using mcl::testing::makeHosts;
using mcl::testing::mesh4Cables;
using mcl::testing::oneRankEach;
using topology::Cluster;
using topology::HostInventory;

// Every rank's report as a healthy Mac would send it: a usable device on
// every cabled interface of its host, its GID mapping the interface's
// address (or a link-local one where the picture has none).
std::vector<RankRdma> healthyReports(const Cluster& c, int nranks) {
  std::vector<RankRdma> ranks(static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    const int host = c.hostOfRank(r);
    ranks[size_t(r)].emuMac = r;
    for (const topology::ClusterLink& l : c.links)
      for (const topology::LinkEnd* end : {&l.a, &l.b}) {
        if (end->host != host || end->interface.empty()) continue;
        std::string device = "rdma_" + end->interface;
        for (const topology::RdmaDevice& d :
             c.hosts[size_t(host)].inventory.rdmaDevices)
          if (d.netdev == end->interface) device = d.name;
        auto& ports = ranks[size_t(r)].ports;
        if (std::any_of(ports.begin(), ports.end(), [&](const PortReport& p) {
              return p.device == device;
            }))
          continue;
        std::string ipv4 = end->address.empty()
                               ? "169.254." + std::to_string(host) + "." +
                                     std::to_string(ports.size() + 1)
                               : end->address;
        ports.push_back({device, end->interface, ipv4, ""});
      }
  }
  return ranks;
}

PortReport& portOf(std::vector<RankRdma>& ranks, int rank,
                   const std::string& device) {
  for (PortReport& p : ranks[size_t(rank)].ports)
    if (p.device == device) return p;
  ADD_FAILURE() << "rank " << rank << " has no " << device;
  static PortReport none;
  return none;
}

// Rank a's wires to b must be rank b's wires to a, ends swapped.
void expectMirrored(const Cluster& c, const std::vector<RankRdma>& ranks) {
  const int n = int(ranks.size());
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b || c.hostOfRank(a) == c.hostOfRank(b)) continue;
      SCOPED_TRACE("ranks " + std::to_string(a) + " and " + std::to_string(b));
      WirePlan ab = planOnCluster(c, ranks, a, b).wires;
      WirePlan ba = planOnCluster(c, ranks, b, a).wires;
      ASSERT_EQ(ab.size(), ba.size());
      for (size_t k = 0; k < ab.size(); ++k) {
        EXPECT_EQ(ab[k].first, ba[k].second);
        EXPECT_EQ(ab[k].second, ba[k].first);
      }
    }
}

void expectVerdict(const PairPlan& plan, Verdict::Decline decline,
                   const std::vector<std::string>& says) {
  EXPECT_EQ(plan.verdict.answer, Verdict::No);
  EXPECT_EQ(plan.verdict.decline, decline) << plan.verdict.why;
  EXPECT_TRUE(plan.wires.empty());
  for (const std::string& s : says)
    EXPECT_NE(plan.verdict.why.find(s), std::string::npos)
        << "'" << plan.verdict.why << "' does not mention '" << s << "'";
}

Cluster mesh4(std::vector<HostInventory>* keep = nullptr) {
  auto hosts = macInventories("mesh4", 4);
  addressCables(hosts, mesh4Cables());
  if (keep) *keep = hosts;
  return topology::buildCluster(hosts, oneRankEach(4));
}

TEST(RdmaWirePlan, MeshOfFourMacsUsesEveryCableWithTheDoubledPairTwice) {
  Cluster c = mesh4();
  auto ranks = healthyReports(c, 4);
  EXPECT_EQ(planOnCluster(c, ranks, 0, 1).wires,
            (WirePlan{{"rdma_en2", "rdma_en4"}, {"rdma_en5", "rdma_en2"}}));
  EXPECT_EQ(planOnCluster(c, ranks, 0, 2).wires,
            (WirePlan{{"rdma_en3", "rdma_en3"}}));
  PairPlan p03 = planOnCluster(c, ranks, 0, 3);
  EXPECT_EQ(p03.wires, (WirePlan{{"rdma_en4", "rdma_en3"}}));
  EXPECT_EQ(p03.verdict.answer, Verdict::Yes);
  expectMirrored(c, ranks);
}

TEST(RdmaWirePlan, MacsListingTheirPortsInAnyOrderAgreeOnEveryWire) {
  std::vector<HostInventory> hosts;
  Cluster first = mesh4(&hosts);
  WirePlan expected =
      planOnCluster(first, healthyReports(first, 4), 1, 0).wires;
  std::mt19937 rng(11);
  for (int round = 0; round < 5; ++round) {
    for (HostInventory& h : hosts) {
      std::shuffle(h.thunderboltPorts.begin(), h.thunderboltPorts.end(), rng);
      std::shuffle(h.interfaces.begin(), h.interfaces.end(), rng);
    }
    Cluster c = topology::buildCluster(hosts, oneRankEach(4));
    auto ranks = healthyReports(c, 4);
    EXPECT_EQ(planOnCluster(c, ranks, 1, 0).wires, expected);
    expectMirrored(c, ranks);
  }
}

TEST(RdmaWirePlan, RanksSharingAMacUseThatMacsCables) {
  auto hosts = macInventories("mesh4", 2);
  Cluster c = topology::buildCluster(hosts, {{0, 1}, {2, 3}});
  auto ranks = healthyReports(c, 4);
  EXPECT_EQ(planOnCluster(c, ranks, 1, 2).wires,
            planOnCluster(c, ranks, 1, 3).wires);
  EXPECT_EQ(planOnCluster(c, ranks, 1, 2).wires.size(), 2u);
  expectMirrored(c, ranks);
}

TEST(RdmaWirePlan, RoceDevicesAreNamedByTheInventory) {
  auto hosts = makeHosts(2);
  cable(hosts, 0, "eth1", 1, "eth3", 1);
  hosts[0].rdmaDevices.push_back({"mlx5_0", "eth1", true});
  hosts[1].rdmaDevices.push_back({"mlx5_2", "eth3", true});
  Cluster c = topology::buildCluster(hosts, oneRankEach(2));
  EXPECT_EQ(planOnCluster(c, healthyReports(c, 2), 0, 1).wires,
            (WirePlan{{"mlx5_0", "mlx5_2"}}));
}

TEST(RdmaWirePlan, AThunderbolt4CableIsBrokenNamingItsEnds) {
  auto hosts = macInventories("mesh4", 4);
  Cluster c = topology::buildCluster(hosts, oneRankEach(4));
  for (topology::ClusterLink& l : c.links)
    if (l.a.host == 0 && l.b.host == 2) l.generation = 4;
  auto ranks = healthyReports(c, 4);
  expectVerdict(planOnCluster(c, ranks, 0, 2), Verdict::Broken,
                {"en3<->en3", "Thunderbolt 4", "Thunderbolt 5"});
  EXPECT_EQ(planOnCluster(c, ranks, 0, 1).verdict.answer, Verdict::Yes);
}

TEST(RdmaWirePlan, APairWithoutACableHasNoPath) {
  auto hosts = macInventories("ring4", 4);
  Cluster c = topology::buildCluster(hosts, oneRankEach(4));
  auto ranks = healthyReports(c, 4);
  EXPECT_EQ(planOnCluster(c, ranks, 0, 1).verdict.answer, Verdict::Yes);
  expectVerdict(planOnCluster(c, ranks, 0, 2), Verdict::NoPath,
                {"no cable joins", "mac0 and mac2", "mcl-perf topo"});
}

TEST(RdmaWirePlan, APortDownAtOneEndLeavesTheOtherCableOfTheDoubledPair) {
  Cluster c = mesh4();
  auto ranks = healthyReports(c, 4);
  portOf(ranks, 1, "rdma_en4").problem = "the port is down: check the cable";
  EXPECT_EQ(planOnCluster(c, ranks, 0, 1).wires,
            (WirePlan{{"rdma_en5", "rdma_en2"}}));
  EXPECT_EQ(planOnCluster(c, ranks, 1, 0).wires,
            (WirePlan{{"rdma_en2", "rdma_en5"}}));
  portOf(ranks, 0, "rdma_en5").problem = "ibv_alloc_pd failed";
  expectVerdict(planOnCluster(c, ranks, 0, 1), Verdict::Broken,
                {"rank 1's rdma_en4: the port is down",
                 "rank 0's rdma_en5: ibv_alloc_pd failed"});
}

TEST(RdmaWirePlan, AGidThatIsMissingOrMapsAnotherAddressIsBroken) {
  Cluster c = mesh4();
  auto ranks = healthyReports(c, 4);
  portOf(ranks, 2, "rdma_en3").ipv4 = "";
  expectVerdict(
      planOnCluster(c, ranks, 0, 2), Verdict::Broken,
      {"rank 2's rdma_en3", "no IPv4-mapped GID", "en3 needs an IPv4 address"});
  ranks = healthyReports(c, 4);
  portOf(ranks, 3, "rdma_en3").ipv4 = "169.254.9.9";
  expectVerdict(planOnCluster(c, ranks, 0, 3), Verdict::Broken,
                {"rank 3's rdma_en3", "::ffff:169.254.9.9", "10.77.4.2"});
}

TEST(RdmaWirePlan, ARankWithoutRdmaBreaksItsThunderboltPairsOnly) {
  auto hosts = macInventories("mesh4", 4);
  addressCables(hosts, mesh4Cables());
  cable(hosts, 0, "eth0", 1, "eth0", 50);  // a plain Ethernet cable too
  Cluster c = topology::buildCluster(hosts, oneRankEach(4));
  auto ranks = healthyReports(c, 4);
  ranks[2].unavailable = "cannot load the RDMA library librdma.dylib";
  ranks[2].ports.clear();
  expectVerdict(planOnCluster(c, ranks, 0, 2), Verdict::Broken,
                {"rank 2: cannot load the RDMA library"});
  EXPECT_EQ(planOnCluster(c, ranks, 0, 1).wires.size(), 2u);  // not eth0

  // Linux hosts with an Ethernet cable and no RDMA anywhere: nothing was
  // meant for RDMA, so nothing is broken.
  auto plain = makeHosts(2);
  cable(plain, 0, "eth1", 1, "eth1", 1);
  Cluster p = topology::buildCluster(plain, oneRankEach(2));
  std::vector<RankRdma> none(2);
  none[0].unavailable = none[1].unavailable = "no RDMA devices";
  expectVerdict(planOnCluster(p, none, 0, 1), Verdict::NoPath,
                {"has an RDMA device"});
}

TEST(RdmaWirePlan, DevicesLeftOutByOneEndAreNamed) {
  Cluster c = mesh4();
  auto ranks = healthyReports(c, 4);
  ranks[1].kept = {"rdma_en2"};  // keeps the doubled pair's second cable
  EXPECT_EQ(planOnCluster(c, ranks, 0, 1).wires,
            (WirePlan{{"rdma_en5", "rdma_en2"}}));
  expectVerdict(planOnCluster(c, ranks, 1, 2), Verdict::Broken,
                {"rank 1 leaves rdma_en3 out (MCL_RDMA_DEVICES)"});
}

TEST(RdmaWirePlan, TheEmulatedFabricJoinsOnlyCabledMacs) {
  // Macs 0-1 and 1-2 cabled, 0-2 not (a line of three).
  EmuCabling cabling = {{{}, {"rdma_en2"}, {}},
                        {{"rdma_en2"}, {}, {"rdma_en3"}},
                        {{}, {"rdma_en3"}, {}}};
  EmuFabric fabric = buildEmuFabric(cabling, "");
  std::vector<RankRdma> ranks(3);
  for (int r = 0; r < 3; ++r) {
    ranks[size_t(r)].emuMac = r;
    for (const std::string& d : fabric.devices[size_t(r)])
      ranks[size_t(r)].ports.push_back({d, d.substr(5), "169.254.0.1", ""});
  }
  EXPECT_EQ(planOnFabric(fabric, ranks, 1, 2).wires,
            (WirePlan{{"rdma_en3", "rdma_en3"}}));
  expectVerdict(planOnFabric(fabric, ranks, 0, 2), Verdict::NoPath,
                {"no emulated cable joins Mac 0 and Mac 2"});
  portOf(ranks, 1, "rdma_en2").problem = "the port is down";
  expectVerdict(planOnFabric(fabric, ranks, 0, 1), Verdict::Broken,
                {"rank 1's rdma_en2: the port is down"});
}

TEST(RdmaWirePlan, ReportsCrossTheWireAndBrokenOnesAreRefused) {
  RankRdma r;
  r.emuMac = 3;
  r.kept = {"rdma_en2"};
  r.ports = {{"rdma_en2", "en2", "10.0.0.1", ""},
             {"rdma_en3", "en3", "", "the port is down"}};
  RankRdma back = decodeRankRdma(encodeRankRdma(r));
  EXPECT_EQ(back.emuMac, 3);
  EXPECT_EQ(back.kept, r.kept);
  ASSERT_EQ(back.ports.size(), 2u);
  EXPECT_EQ(back.ports[1].problem, "the port is down");
  EXPECT_EQ(back.ports[0].ipv4, "10.0.0.1");
  std::vector<uint8_t> bytes = encodeRankRdma(r);
  for (size_t cut = 0; cut < bytes.size(); cut += 3) {
    std::vector<uint8_t> shorter(bytes.begin(), bytes.begin() + long(cut));
    try {
      decodeRankRdma(shorter);
      ADD_FAILURE() << "a report cut at " << cut << " bytes was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), mclRemoteError);
    }
  }
}

}  // namespace
}  // namespace mcl::transport::rdma
