#include "transports/rdma/rdma_device.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "base/wire.h"
#include "transports/rdma/rdma_wire_plan.h"

namespace mcl::transport::rdma {

namespace {

// MCL_RDMA_DEVICES: only the cables whose device at this end is listed.
// The others are blanked, not removed: a cable keeps its index, so two ends
// that keep different cables find no partner for them (an error at init)
// instead of pairing queue pairs on different cables.
std::map<int, WirePlan> onlyListedDevices(
    std::map<int, WirePlan> plan, const std::vector<std::string>& devices,
    const std::string& label) {
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
              label.c_str(), kept, cables.size(), it->first);
    it = kept == 0 ? plan.erase(it) : std::next(it);
  }
  return plan;
}

}  // namespace

RdmaDevice::RdmaDevice(const DeviceInit& init)
    : init_(init), options_(loadRdmaOptions(*init.params)) {
  options_.provider.emuMac = init.emuMac;
}

Verdict RdmaDevice::reaches(int a, int b) const {
  if (a == b) return Verdict::no("a rank's own connection is shared memory");
  // On the emulated fabric every rank plays a Mac of its own.
  if (options_.provider.provider == "emu") return Verdict::yes();
  const RankPlace& pa = places_[size_t(a)];
  if (pa.hostId != places_[size_t(b)].hostId) return Verdict::yes();
  return Verdict::no(
      "RDMA runs between Macs over Thunderbolt cables, and ranks of one Mac "
      "(" +
      pa.hostName +
      ") share memory (MCL_TRANSPORT=shm); "
      "MCL_RDMA_PROVIDER=emu runs the emulated fabric, one Mac per rank");
}

void RdmaDevice::open(const std::vector<int>&, platform::Deadline) {
  // The emulated fabric keeps communicators' wires apart by their id.
  char ns[16];
  snprintf(ns, sizeof(ns), "%010" PRIx64,
           static_cast<uint64_t>(commId_ & 0xffffffffffULL));
  options_.provider.emuNamespace = ns;
  wires_ = std::make_unique<RdmaWires>(init_.rank, options_);
}

std::vector<uint8_t> RdmaDevice::details() const {
  WireWriter w;
  w.str(options_.provider.provider);
  w.u32(options_.shape.frameBytes);
  w.u32(static_cast<uint32_t>(options_.shape.depth));
  return w.take();
}

void RdmaDevice::learn(const std::vector<std::vector<uint8_t>>& all,
                       const topology::Cluster& cluster) {
  cluster_ = &cluster;
  for (size_t r = 0; r < all.size(); ++r) {
    WireReader in(all[r].data(), all[r].size(), "RDMA details");
    std::string provider = in.str(16);
    uint32_t frameBytes = in.u32();
    uint32_t depth = in.u32();
    in.finish();
    // Ranks on different providers, or with frames of different shapes,
    // could not pair their queue pairs.
    if (provider != options_.provider.provider ||
        frameBytes != options_.shape.frameBytes ||
        depth != uint32_t(options_.shape.depth))
      throw error(mclInvalidUsage,
                  "%s: rank %zu has MCL_RDMA_PROVIDER=%s and RDMA frames %u x "
                  "%u, this rank %s and %u x %u (MCL_RDMA_FRAME_BYTES x "
                  "MCL_RDMA_DEPTH): set them alike on every rank",
                  init_.label.c_str(), r, provider.c_str(), frameBytes, depth,
                  options_.provider.provider.c_str(), options_.shape.frameBytes,
                  options_.shape.depth);
  }
}

void RdmaDevice::describePath(int, int, topology::RankPath& path) const {
  // The cables of each pair show in the INFO log and in topo's cable list;
  // the path says which fabric carries them.
  path.linkKind = options_.provider.provider == "emu" ? "emulated" : "cable";
}

std::map<int, WirePlan> RdmaDevice::planFor(const std::vector<int>& peers,
                                            InitExchange& exchange) const {
  if (!wires_->emulated())
    return rdmaWirePlan(*cluster_, init_.rank, peers, init_.label);
  // The Mac each rank plays, gathered: after a split, rank r need not be
  // Mac r.
  WireWriter w;
  w.i32(options_.provider.emuMac);
  std::vector<int> macs;
  for (const std::vector<uint8_t>& b : exchange.allGather(w.take())) {
    WireReader in(b.data(), b.size(), "emulated Mac");
    macs.push_back(in.i32());
    in.finish();
  }
  return wires_->emulatedPlan(peers, macs);
}

void RdmaDevice::connect(const std::vector<int>& peers, InitExchange& exchange,
                         platform::Deadline) {
  wires_->createWires(onlyListedDevices(planFor(peers, exchange),
                                        options_.devices, init_.label));
  const std::vector<std::vector<uint8_t>> all =
      exchange.allGather(wires_->addresses());
  wires_->connectWires(all);
  fewestWires_ = std::max(1, RdmaWires::fewestWiresPerPair(all));
  for (int peer : peers)
    MCL_LOG(Info, kLogInit, "rank %d: to rank %d via %s", init_.rank, peer,
            wires_->describe(peer).c_str());
}

std::unique_ptr<Connection> RdmaDevice::connection(int peer, Channel channel) {
  return wires_->connect(peer, static_cast<uint32_t>(channel));
}

uint64_t RdmaDevice::receiveCapacity() const {
  // The same on every rank: learn() checked that the frames agree.
  return wires_->capacityPerWire();
}

BufferUse RdmaDevice::bufferUse() const {
  // A queue pair per channel on each cable, with its frames both ways.
  BufferUse u;
  u.bytesPerWire = uint64_t{kRdmaChannels} * 2 *
                   static_cast<uint64_t>(options_.shape.depth) *
                   options_.shape.frameBytes;
  u.settings = "MCL_RDMA_DEPTH x MCL_RDMA_FRAME_BYTES, per cable";
  if (wires_) {
    u.wires = wires_->cableCount();
    u.mostWiresToOnePeer = std::max<size_t>(1, wires_->mostCablesToOnePeer());
  }
  return u;
}

}  // namespace mcl::transport::rdma
