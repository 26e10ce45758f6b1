#include "core/comm_rdma.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <vector>

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
  options.provider.emuMac = comm.emuMac;
  char ns[16];
  snprintf(ns, sizeof(ns), "%010" PRIx64,
           static_cast<uint64_t>(comm.commId & 0xffffffffffULL));
  options.provider.emuNamespace = ns;
  return std::make_unique<transport::rdma::RdmaDevice>(comm.rank, options);
}

namespace {

// The Mac each rank plays on the emulated fabric, gathered: after a split,
// rank r need not be Mac r.
std::vector<int> emulatedMacs(const mclComm& comm, BootstrapClient& bootstrap) {
  const int32_t mine = comm.emuMac;
  std::vector<uint8_t> bytes(sizeof mine);
  std::memcpy(bytes.data(), &mine, sizeof mine);
  std::vector<int> macs;
  for (const std::vector<uint8_t>& b : bootstrap.allGather(bytes)) {
    int32_t mac = -1;
    if (b.size() == sizeof mac) std::memcpy(&mac, b.data(), sizeof mac);
    macs.push_back(mac);
  }
  return macs;
}

// MCL_RDMA_DEVICES: only the cables whose device at this end is listed.
// The others are blanked, not removed: a cable keeps its index, so two ends
// that keep different cables find no partner for them (an error at init)
// instead of pairing queue pairs on different cables.
std::map<int, transport::rdma::WirePlan> onlyListedDevices(
    std::map<int, transport::rdma::WirePlan> plan,
    const std::vector<std::string>& devices, const mclComm& comm) {
  if (devices.empty()) return plan;
  for (auto it = plan.begin(); it != plan.end();) {
    auto& cables = it->second;
    size_t kept = 0;
    for (auto& cable : cables) {
      if (std::find(devices.begin(), devices.end(), cable.first) ==
          devices.end())
        cable = {};
      else
        ++kept;
    }
    if (kept != cables.size())
      MCL_LOG(Info, kLogInit,
              "%s: MCL_RDMA_DEVICES keeps %zu of the %zu cables to rank %d",
              comm.label().c_str(), kept, cables.size(), it->first);
    it = kept == 0 ? plan.erase(it) : std::next(it);
  }
  return plan;
}

}  // namespace

void wireRdma(mclComm& comm, const std::vector<int>& peers,
              BootstrapClient& bootstrap) {
  transport::rdma::RdmaDevice& rdma = *comm.rdma;
  rdma.createWires(onlyListedDevices(
      rdma.emulated()
          ? rdma.emulatedPlan(peers, emulatedMacs(comm, bootstrap))
          : rdmaWirePlan(comm.cluster, comm.rank, peers, comm.label()),
      comm.settings.rdma.devices, comm));
  const std::vector<std::vector<uint8_t>> all =
      bootstrap.allGather(rdma.addresses());
  rdma.connectWires(all);
  comm.rdmaWires = transport::rdma::RdmaDevice::fewestWiresPerPair(all);
  for (int peer : peers)
    MCL_LOG(Info, kLogInit, "rank %d: to rank %d via %s", comm.rank, peer,
            rdma.describe(peer).c_str());
}

}  // namespace mcl
