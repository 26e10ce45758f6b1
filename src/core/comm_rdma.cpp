#include "core/comm_rdma.h"

#include <cinttypes>

#include "base/error.h"
#include "base/log.h"
#include "core/comm.h"

namespace mcl {

namespace {

// On real hardware a cable is a Thunderbolt link of the cluster picture:
// its interface enX carries the device rdma_enX at both ends, numbered
// in the wire order every rank derives alike.
std::map<int, transport::rdma::WirePlan> clusterPlan(
    const mclComm& comm, const std::vector<int>& peers) {
  std::map<int, transport::rdma::WirePlan> plan;
  const topology::Cluster& c = comm.cluster;
  int me = c.hostOfRank(comm.rank);
  for (int peer : peers) {
    int there = c.hostOfRank(peer);
    for (const topology::ClusterLink& l : c.links) {
      if (l.a.interface.empty() || l.b.interface.empty()) continue;
      bool ours = (l.a.host == me && l.b.host == there) ||
                  (l.b.host == me && l.a.host == there);
      if (ours && l.generation == 4)
        throw error(mclInvalidUsage,
                    "%s: the cable %s<->%s to rank %d runs at Thunderbolt 4; "
                    "RDMA needs Thunderbolt 5 ports and cables at both ends "
                    "(use MCL_TRANSPORT=tcp on this cable)",
                    comm.label().c_str(), l.a.interface.c_str(),
                    l.b.interface.c_str(), peer);
      if (l.a.host == me && l.b.host == there)
        plan[peer].push_back(
            {"rdma_" + l.a.interface, "rdma_" + l.b.interface});
      else if (l.b.host == me && l.a.host == there)
        plan[peer].push_back(
            {"rdma_" + l.b.interface, "rdma_" + l.a.interface});
    }
    if (plan[peer].empty())
      throw error(mclInvalidUsage,
                  "%s: MCL_TRANSPORT=rdma, but no Thunderbolt cable joins this "
                  "host to rank %d's (see `mcl-perf topo`); RDMA needs a "
                  "direct cable",
                  comm.label().c_str(), peer);
  }
  return plan;
}

}  // namespace

std::unique_ptr<transport::rdma::RdmaDevice> openRdmaDevice(
    const mclComm& comm) {
  transport::rdma::RdmaOptions options = comm.settings.rdma;
  options.provider.emuMac = comm.rank;
  char ns[16];
  snprintf(ns, sizeof(ns), "%010" PRIx64,
           static_cast<uint64_t>(comm.commId & 0xffffffffffULL));
  options.provider.emuNamespace = ns;
  return std::make_unique<transport::rdma::RdmaDevice>(comm.rank, options);
}

void wireRdma(mclComm& comm, const std::vector<int>& peers,
              BootstrapClient& bootstrap) {
  transport::rdma::RdmaDevice& rdma = *comm.rdma;
  rdma.createWires(rdma.emulated() ? rdma.emulatedPlan(peers)
                                   : clusterPlan(comm, peers));
  rdma.connectWires(bootstrap.allGather(rdma.addresses()));
  for (int peer : peers)
    MCL_LOG(Info, kLogInit, "rank %d: to rank %d via %s", comm.rank, peer,
            rdma.describe(peer).c_str());
}

}  // namespace mcl
