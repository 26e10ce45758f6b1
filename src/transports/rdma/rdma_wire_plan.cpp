#include "transports/rdma/rdma_wire_plan.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/wire.h"

namespace mcl::transport::rdma {

namespace {

constexpr size_t kMaxPorts = 64;
constexpr size_t kMaxText = 1024;

std::string rankText(int rank) { return "rank " + std::to_string(rank); }

const PortReport* portOf(const RankRdma& r, const std::string& device) {
  for (const PortReport& p : r.ports)
    if (p.device == device) return &p;
  return nullptr;
}

// Why rank `rank` cannot use `device` for a cable whose interface has
// `address` (empty: not checked, as on the emulated fabric); "" when it can.
std::string endProblem(const RankRdma& r, int rank, const std::string& device,
                       const std::string& address) {
  if (!r.unavailable.empty()) return rankText(rank) + ": " + r.unavailable;
  if (!r.kept.empty() &&
      std::find(r.kept.begin(), r.kept.end(), device) == r.kept.end())
    return rankText(rank) + " leaves " + device + " out (MCL_RDMA_DEVICES)";
  const PortReport* p = portOf(r, device);
  if (p == nullptr) return rankText(rank) + " has no RDMA device " + device;
  if (!p->problem.empty())
    return rankText(rank) + "'s " + device + ": " + p->problem;
  const std::string netdev = p->netdev.empty() ? "its interface" : p->netdev;
  if (p->ipv4.empty())
    return rankText(rank) + "'s " + device +
           " has no IPv4-mapped GID: " + netdev +
           " needs an IPv4 address (a /30 per cable, or link-local)";
  if (!address.empty() && address.find(':') == std::string::npos &&
      p->ipv4 != address)
    return rankText(rank) + "'s " + device + " has the GID ::ffff:" + p->ipv4 +
           ", but the cable's interface " + netdev + " has the address " +
           address;
  return "";
}

// The device on a cable's end: the one the host's inventory ties to the
// interface (a RoCE NIC on Linux, "mlx5_0" on eth1), else Apple's name,
// rdma_<interface>.
std::string deviceOn(const topology::Cluster& cluster,
                     const topology::LinkEnd& end) {
  const topology::ClusterHost& host = cluster.hosts[size_t(end.host)];
  for (const topology::RdmaDevice& d : host.inventory.rdmaDevices)
    if (d.netdev == end.interface) return d.name;
  return "rdma_" + end.interface;
}

// Whether RDMA is expected on the cable: a Thunderbolt cable, or one whose
// interface has an RDMA device at either end.
bool meantForRdma(const topology::Cluster& cluster,
                  const topology::ClusterLink& l) {
  if (l.kind == "thunderbolt") return true;
  for (const topology::LinkEnd* end : {&l.a, &l.b})
    for (const topology::RdmaDevice& d :
         cluster.hosts[size_t(end->host)].inventory.rdmaDevices)
      if (d.netdev == end->interface) return true;
  return false;
}

PairPlan decide(WirePlan wires, const std::vector<std::string>& problems,
                bool meant, const std::string& noCable) {
  PairPlan plan;
  if (!wires.empty()) {
    plan.wires = std::move(wires);
    plan.verdict = Verdict::yes();
    return plan;
  }
  if (!meant) {
    plan.verdict = Verdict::noPath(noCable);
    return plan;
  }
  std::string why;
  for (const std::string& p : problems) why += (why.empty() ? "" : "; ") + p;
  plan.verdict = Verdict::broken(why);
  return plan;
}

}  // namespace

std::vector<uint8_t> encodeRankRdma(const RankRdma& r) {
  WireWriter w;
  w.i32(r.emuMac);
  w.str(r.unavailable.substr(0, kMaxText));
  w.u32(static_cast<uint32_t>(r.kept.size()));
  for (const std::string& d : r.kept) w.str(d);
  w.u32(static_cast<uint32_t>(r.ports.size()));
  for (const PortReport& p : r.ports) {
    w.str(p.device);
    w.str(p.netdev);
    w.str(p.ipv4);
    w.str(p.problem.substr(0, kMaxText));
  }
  return w.take();
}

RankRdma decodeRankRdma(const std::vector<uint8_t>& bytes) {
  WireReader in(bytes.data(), bytes.size(), "RDMA report");
  RankRdma r;
  r.emuMac = in.i32();
  r.unavailable = in.str(kMaxText);
  const uint32_t kept = in.u32();
  if (kept > kMaxPorts)
    throw error(mclRemoteError, "RDMA report: %u devices kept", kept);
  for (uint32_t i = 0; i < kept; ++i) r.kept.push_back(in.str(64));
  const uint32_t ports = in.u32();
  if (ports > kMaxPorts)
    throw error(mclRemoteError, "RDMA report: %u devices", ports);
  for (uint32_t i = 0; i < ports; ++i) {
    PortReport p;
    p.device = in.str(64);
    p.netdev = in.str(64);
    p.ipv4 = in.str(64);
    p.problem = in.str(kMaxText);
    r.ports.push_back(std::move(p));
  }
  in.finish();
  return r;
}

PairPlan planOnCluster(const topology::Cluster& cluster,
                       const std::vector<RankRdma>& ranks, int a, int b) {
  const int ha = cluster.hostOfRank(a);
  const int hb = cluster.hostOfRank(b);
  const auto known = [&](int host) {
    return host >= 0 && size_t(host) < cluster.hosts.size();
  };
  if (!known(ha) || !known(hb) || size_t(std::max(a, b)) >= ranks.size())
    return {{},
            Verdict::noPath("the cluster picture has no host for rank " +
                            std::to_string(known(ha) ? b : a))};
  const std::string hosts =
      cluster.hosts[size_t(ha)].name + " and " + cluster.hosts[size_t(hb)].name;
  WirePlan wires;
  std::vector<std::string> problems;
  bool meant = false;
  bool cabled = false;
  for (const topology::ClusterLink& l : cluster.links) {
    const bool forward = l.a.host == ha && l.b.host == hb;
    if (!forward && !(l.b.host == ha && l.a.host == hb)) continue;
    if (l.a.interface.empty() || l.b.interface.empty()) continue;
    cabled = true;
    if (!meantForRdma(cluster, l)) continue;
    meant = true;
    const topology::LinkEnd& ea = forward ? l.a : l.b;
    const topology::LinkEnd& eb = forward ? l.b : l.a;
    const std::string cable = ea.interface + "<->" + eb.interface;
    if (l.generation == 4) {
      problems.push_back("the cable " + cable +
                         " runs at Thunderbolt 4; RDMA needs Thunderbolt 5 "
                         "ports and cables at both ends");
      continue;
    }
    const std::string da = deviceOn(cluster, ea);
    const std::string db = deviceOn(cluster, eb);
    std::string pa = endProblem(ranks[size_t(a)], a, da, ea.address);
    std::string pb = endProblem(ranks[size_t(b)], b, db, eb.address);
    if (!pa.empty()) problems.push_back(pa);
    if (!pb.empty()) problems.push_back(pb);
    if (pa.empty() && pb.empty()) wires.push_back({da, db});
  }
  return decide(std::move(wires), problems, meant,
                cabled ? "no cable between " + hosts +
                             " has an RDMA device (see mcl-perf topo)"
                       : "no cable joins " + hosts +
                             " (see mcl-perf topo); RDMA needs a direct "
                             "Thunderbolt cable");
}

PairPlan planOnFabric(const EmuFabric& fabric,
                      const std::vector<RankRdma>& ranks, int a, int b) {
  if (a < 0 || b < 0 || size_t(std::max(a, b)) >= ranks.size())
    return {{},
            Verdict::noPath("no report from rank " +
                            std::to_string(std::max(a, b)))};
  const int ma = ranks[size_t(a)].emuMac;
  const int mb = ranks[size_t(b)].emuMac;
  WirePlan wires;
  std::vector<std::string> problems;
  bool cabled = false;
  for (const auto& [x, y] : fabric.cables) {
    const bool forward = x.mac == ma && y.mac == mb;
    if (!forward && !(y.mac == ma && x.mac == mb)) continue;
    cabled = true;
    const EmuEnd& ea = forward ? x : y;
    const EmuEnd& eb = forward ? y : x;
    std::string pa = endProblem(ranks[size_t(a)], a, ea.device, "");
    std::string pb = endProblem(ranks[size_t(b)], b, eb.device, "");
    if (!pa.empty()) problems.push_back(pa);
    if (!pb.empty()) problems.push_back(pb);
    if (pa.empty() && pb.empty()) wires.push_back({ea.device, eb.device});
  }
  return decide(std::move(wires), problems, cabled,
                "no emulated cable joins Mac " + std::to_string(ma) +
                    " and Mac " + std::to_string(mb) + " (MCL_EMU_FABRIC)");
}

}  // namespace mcl::transport::rdma
