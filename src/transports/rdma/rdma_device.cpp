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
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "base/wire.h"
#include "transports/rdma/rdma_wire_plan.h"

namespace mcl::transport::rdma {

RdmaDevice::RdmaDevice(const DeviceInit& init)
    : init_(init), options_(loadRdmaOptions(*init.params)) {
  options_.provider.emuMac = init.emuMac;
}

Verdict RdmaDevice::reaches(int a, int b) const {
  if (a == b) return Verdict::no("a rank's own connection is shared memory");
  // On the emulated fabric every rank plays a Mac of its own; whether a
  // cable joins two of them is known once every rank said which it plays.
  if (emulated())
    return Verdict::maybe("needs an emulated cable (MCL_EMU_FABRIC)");
  const RankPlace& pa = places_[size_t(a)];
  if (pa.hostId != places_[size_t(b)].hostId)
    return Verdict::maybe(
        "needs a Thunderbolt cable with an RDMA device at both ends");
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
  mine_.emuMac = options_.provider.emuMac;
  mine_.kept = options_.devices;
  try {
    wires_ = std::make_unique<RdmaWires>(init_.rank, options_);
    mine_.ports = wires_->probePorts();
  } catch (const Error& e) {
    if (e.code() == mclInvalidArgument || e.code() == mclInvalidUsage) throw;
    // No library, no devices: this rank has no RDMA, and its pairs are
    // decided from that (a WARN where a cable was meant for it).
    wires_.reset();
    mine_.unavailable = e.what();
    mine_.ports.clear();
  }
  for (const PortReport& p : mine_.ports)
    MCL_LOG(Info, kLogInit, "%s: %s%s%s %s%s%s", init_.label.c_str(),
            emulated() ? "emulated " : "", p.device.c_str(),
            p.netdev.empty() ? "" : (" (" + p.netdev + ")").c_str(),
            p.problem.empty() ? "usable" : "unusable: ", p.problem.c_str(),
            p.ipv4.empty() ? "" : (", GID ::ffff:" + p.ipv4).c_str());
  if (!mine_.unavailable.empty())
    MCL_LOG(Info, kLogInit, "%s: no RDMA: %s", init_.label.c_str(),
            mine_.unavailable.c_str());
}

std::vector<uint8_t> RdmaDevice::details() const {
  WireWriter w;
  w.str(options_.provider.provider);
  w.u32(options_.shape.frameBytes);
  w.u32(static_cast<uint32_t>(options_.shape.depth));
  const std::vector<uint8_t> report = encodeRankRdma(mine_);
  w.blob(report.data(), report.size());
  return w.take();
}

void RdmaDevice::learn(const std::vector<std::vector<uint8_t>>& all,
                       const topology::Cluster& cluster) {
  cluster_ = &cluster;
  ranks_.clear();
  for (size_t r = 0; r < all.size(); ++r) {
    WireReader in(all[r].data(), all[r].size(), "RDMA details");
    std::string provider = in.str(16);
    uint32_t frameBytes = in.u32();
    uint32_t depth = in.u32();
    ranks_.push_back(decodeRankRdma(in.blob(1 << 20)));
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
    const int mac = ranks_.back().emuMac;
    if (emulated() &&
        (mac < 0 || size_t(mac) >= options_.provider.emuCabling.size()))
      throw error(mclRemoteError, "%s: rank %zu plays emulated Mac %d",
                  init_.label.c_str(), r, mac);
  }
  if (emulated()) fabric_ = buildEmuFabric(options_.provider.emuCabling, "");
}

PairPlan RdmaDevice::planOf(int a, int b) const {
  return fabric_ ? planOnFabric(*fabric_, ranks_, a, b)
                 : planOnCluster(*cluster_, ranks_, a, b);
}

Verdict RdmaDevice::canConnect(int a, int b) const {
  Verdict v = reaches(a, b);
  if (v.answer == Verdict::No) return v;
  return planOf(a, b).verdict;
}

void RdmaDevice::describePath(int a, int b, topology::RankPath& path) const {
  path.linkKind = emulated() ? "emulated" : "cable";
  if (a == b) return;
  for (const auto& [from, to] : planOf(a, b).wires)
    path.links.push_back(from + ">" + to);
}

void RdmaDevice::connect(const std::vector<int>& peers, InitExchange& exchange,
                         platform::Deadline) {
  std::map<int, WirePlan> plan;
  for (int peer : peers) plan[peer] = planOf(init_.rank, peer).wires;
  if (!peers.empty() && !wires_)
    throw error(mclInternalError, "%s: RDMA chosen without a provider",
                init_.label.c_str());
  if (wires_) wires_->createWires(plan);
  const std::vector<std::vector<uint8_t>> all =
      exchange.allGather(wires_ ? wires_->addresses() : encodeAddresses({}));
  if (wires_) {
    wires_->connectWires(all);
    // Every use from here on is a turn's (beginCalls/endCalls).
    wires_->keepServiced();
  }
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
  return usableCapacity(options_.shape);
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

std::vector<std::pair<std::string, uint64_t>> RdmaDevice::counters() const {
  if (!wires_) return {};
  const RdmaLossCounts c = wires_->lossCounts();
  return {{"frames_received", c.received},
          {"frames_lost", c.lost},
          {"frames_duplicated", c.duplicates},
          {"frames_resent", c.resent},
          {"probes", c.probes},
          {"control_frames_beyond_spares", c.beyondSpares},
          {"wires_given_up", c.wiresLost},
          {"pieces_moved", c.piecesMoved}};
}

void RdmaDevice::beginCalls() {
  if (wires_) wires_->beginUse();
}

void RdmaDevice::endCalls() {
  if (wires_) wires_->endUse();
}

}  // namespace mcl::transport::rdma
