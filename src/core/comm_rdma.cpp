#include "core/comm_rdma.h"

#include <cinttypes>

#include "base/error.h"
#include "base/log.h"
#include "core/comm.h"
#include "core/rdma_wire_plan.h"

namespace mcl {

bool rdmaBetween(const mclComm& comm, int a, int b) {
  if (comm.settings.transport != "rdma" || a == b) return false;
  return comm.settings.rdma.provider.provider == "emu" ||
         comm.peers[size_t(a)].hostId != comm.peers[size_t(b)].hostId;
}

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
                                   : rdmaWirePlan(comm.cluster, comm.rank,
                                                  peers, comm.label()));
  const std::vector<std::vector<uint8_t>> all =
      bootstrap.allGather(rdma.addresses());
  rdma.connectWires(all);
  comm.rdmaWires = transport::rdma::RdmaDevice::fewestWiresPerPair(all);
  for (int peer : peers)
    MCL_LOG(Info, kLogInit, "rank %d: to rank %d via %s", comm.rank, peer,
            rdma.describe(peer).c_str());
}

}  // namespace mcl
