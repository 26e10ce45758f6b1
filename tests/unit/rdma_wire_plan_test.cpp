// Which devices carry the RDMA wires on real hardware
// (transports/rdma/rdma_wire_plan.h): every cable of the cluster picture, in an
// order both ends agree on however each Mac lists its ports, with clear errors
// for Thunderbolt 4 and for a pair without a cable.
#include "transports/rdma/rdma_wire_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <functional>
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

std::vector<int> othersThan(int rank, int n) {
  std::vector<int> peers;
  for (int r = 0; r < n; ++r)
    if (r != rank) peers.push_back(r);
  return peers;
}

// Rank `a`'s wires to b must be rank b's wires to a, ends swapped.
void expectMirrored(const Cluster& c, int n) {
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b || c.hostOfRank(a) == c.hostOfRank(b)) continue;
      SCOPED_TRACE("ranks " + std::to_string(a) + " and " + std::to_string(b));
      WirePlan ab = rdmaWirePlan(c, a, {b}, "test").at(b);
      WirePlan ba = rdmaWirePlan(c, b, {a}, "test").at(a);
      ASSERT_EQ(ab.size(), ba.size());
      for (size_t k = 0; k < ab.size(); ++k) {
        EXPECT_EQ(ab[k].first, ba[k].second);
        EXPECT_EQ(ab[k].second, ba[k].first);
      }
    }
}

// Runs f, expects mclInvalidUsage whose text mentions every one of `says`.
void expectUsageError(const std::function<void()>& f,
                      const std::vector<std::string>& says) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclInvalidUsage) << e.what();
    for (const std::string& s : says)
      EXPECT_NE(std::string(e.what()).find(s), std::string::npos)
          << "'" << e.what() << "' does not mention '" << s << "'";
  }
}

TEST(RdmaWirePlan, MeshOfFourMacsUsesEveryCableWithTheDoubledPairTwice) {
  auto hosts = macInventories("mesh4", 4);
  addressCables(hosts, mesh4Cables());
  Cluster c = topology::buildCluster(hosts, oneRankEach(4));
  auto plan = rdmaWirePlan(c, 0, othersThan(0, 4), "test");
  EXPECT_EQ(plan.at(1),
            (WirePlan{{"rdma_en2", "rdma_en4"}, {"rdma_en5", "rdma_en2"}}));
  EXPECT_EQ(plan.at(2), (WirePlan{{"rdma_en3", "rdma_en3"}}));
  EXPECT_EQ(plan.at(3), (WirePlan{{"rdma_en4", "rdma_en3"}}));
  expectMirrored(c, 4);
}

TEST(RdmaWirePlan, MacsListingTheirPortsInAnyOrderAgreeOnEveryWire) {
  auto hosts = macInventories("mesh4", 4);
  addressCables(hosts, mesh4Cables());
  WirePlan expected =
      rdmaWirePlan(topology::buildCluster(hosts, oneRankEach(4)), 1, {0},
                   "test")
          .at(0);
  std::mt19937 rng(11);
  for (int round = 0; round < 5; ++round) {
    for (HostInventory& h : hosts) {
      std::shuffle(h.thunderboltPorts.begin(), h.thunderboltPorts.end(), rng);
      std::shuffle(h.interfaces.begin(), h.interfaces.end(), rng);
    }
    Cluster c = topology::buildCluster(hosts, oneRankEach(4));
    EXPECT_EQ(rdmaWirePlan(c, 1, {0}, "test").at(0), expected);
    expectMirrored(c, 4);
  }
}

TEST(RdmaWirePlan, RanksSharingAMacUseThatMacsCables) {
  auto hosts = macInventories("mesh4", 2);
  Cluster c = topology::buildCluster(hosts, {{0, 1}, {2, 3}});
  auto plan = rdmaWirePlan(c, 1, {2, 3}, "test");
  EXPECT_EQ(plan.at(2), plan.at(3));
  EXPECT_EQ(plan.at(2).size(), 2u);
  expectMirrored(c, 4);
}

TEST(RdmaWirePlan, RoceDevicesAreNamedByTheInventory) {
  auto hosts = makeHosts(2);
  cable(hosts, 0, "eth1", 1, "eth3", 1);
  hosts[0].rdmaDevices.push_back({"mlx5_0", "eth1", true});
  hosts[1].rdmaDevices.push_back({"mlx5_2", "eth3", true});
  Cluster c = topology::buildCluster(hosts, oneRankEach(2));
  EXPECT_EQ(rdmaWirePlan(c, 0, {1}, "test").at(1),
            (WirePlan{{"mlx5_0", "mlx5_2"}}));
}

TEST(RdmaWirePlan, AThunderbolt4CableIsRefusedNamingItsEnds) {
  auto hosts = macInventories("mesh4", 4);
  Cluster c = topology::buildCluster(hosts, oneRankEach(4));
  for (topology::ClusterLink& l : c.links)
    if (l.a.host == 0 && l.b.host == 2) l.generation = 4;
  expectUsageError(
      [&] {
        rdmaWirePlan(c, 0, {1, 2}, "comm 7 rank 0");
      },
      {"comm 7 rank 0", "en3<->en3", "rank 2", "Thunderbolt 4",
       "MCL_TRANSPORT=tcp"});
  EXPECT_NO_THROW(rdmaWirePlan(c, 0, {1, 3}, "test"));
}

TEST(RdmaWirePlan, APairWithoutACableIsRefusedNamingThePeer) {
  auto hosts = macInventories("ring4", 4);
  Cluster c = topology::buildCluster(hosts, oneRankEach(4));
  EXPECT_NO_THROW(rdmaWirePlan(c, 0, {1, 3}, "test"));
  expectUsageError(
      [&] {
        rdmaWirePlan(c, 0, {1, 2, 3}, "comm 7 rank 0");
      },
      {"comm 7 rank 0", "rank 2", "no Thunderbolt cable", "mcl-perf topo"});
}

}  // namespace
}  // namespace mcl::transport::rdma
