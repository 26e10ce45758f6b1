#include "transports/rdma/rdma_wires.h"

#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "base/wire.h"
#include "transports/rdma/emu_provider.h"

namespace mcl::transport::rdma {

namespace {

// Completions arrive in memory, with no descriptor to sleep on (the
// emulated fabric) or only through a completion channel that costs a
// system call per event: past the executor's spin and yield budgets, nap
// in short steps. Each nap first services every connection of the
// communicator, so one that no operation uses now still answers probes and
// sends again what its peer lost.
class NapWaker final : public Waker {
 public:
  explicit NapWaker(std::shared_ptr<ConnectionSet> set)
      : set_(std::move(set)) {}
  uint32_t arm() override { return 0; }
  void sleep(uint32_t, int64_t timeoutNs) override {
    set_->serviceAll();
    set_->serviceOthers();
    int64_t ns = std::min<int64_t>(timeoutNs, kNapNs);
    if (interrupted_.exchange(false) || ns <= 0) return;
    timespec t{0, static_cast<long>(ns)};
    nanosleep(&t, nullptr);
  }
  void disarm() override {}
  void interrupt() override { interrupted_ = true; }
  int64_t napNs() const override { return kNapNs; }

 private:
  static constexpr int64_t kNapNs = 50000;
  std::shared_ptr<ConnectionSet> set_;
  std::atomic<bool> interrupted_{false};
};

}  // namespace

RdmaWires::RdmaWires(int rank, const RdmaOptions& options)
    : rank_(rank),
      options_(options),
      provider_(openProvider(options.provider)),
      connections_(std::make_shared<ConnectionSet>()),
      waker_(std::make_unique<NapWaker>(connections_)) {
  if (!provider_->emulated() && provider_->devices().empty())
    throw error(mclSystemError,
                "rank %d: no RDMA devices (%s): RDMA needs Thunderbolt 5 "
                "Macs on macOS 26.2+ with RDMA enabled (boot recoveryOS, run "
                "`rdma_ctl enable`, reboot; `rdma_ctl status` tells), or an "
                "RDMA NIC on Linux; MCL_RDMA_PROVIDER=emu runs the emulated "
                "fabric instead",
                rank, provider_->name());
  if (options_.shape.frameBytes % 64 != 0 ||
      options_.shape.frameBytes < 2 * kFrameHeaderBytes)
    throw error(
        mclInvalidArgument,
        "MCL_RDMA_FRAME_BYTES=%u must be a multiple of 64, at least %zu",
        options_.shape.frameBytes, 2 * kFrameHeaderBytes);
  const FrameLimit limit = provider_->frameLimit();
  if (limit.maxBytes != 0 && options_.shape.frameBytes > limit.maxBytes)
    throw error(mclInvalidArgument,
                "rank %d: MCL_RDMA_FRAME_BYTES=%u is more than %u: %s; leave "
                "it at 4096",
                rank, options_.shape.frameBytes, limit.maxBytes,
                limit.why.c_str());
}

RdmaWires::~RdmaWires() {
  const RdmaLossCounts c = connections_->counts();
  if (c.wiresLost > 0)
    MCL_LOG(Info, kLogInit,
            "rank %d: rdma wires given up mid-job: %llu (cables lost); %llu "
            "pieces sent again over the wires left or the TCP standby",
            rank_, static_cast<unsigned long long>(c.wiresLost),
            static_cast<unsigned long long>(c.piecesMoved));
  if (c.lost + c.duplicates + c.resent + c.beyondSpares > 0)
    MCL_LOG(Info, kLogInit,
            "rank %d: rdma frames: %llu received, %llu lost, %llu "
            "duplicated, %llu sent again, %llu probes, %llu control frames "
            "beyond the peer's spare receives",
            rank_, static_cast<unsigned long long>(c.received),
            static_cast<unsigned long long>(c.lost),
            static_cast<unsigned long long>(c.duplicates),
            static_cast<unsigned long long>(c.resent),
            static_cast<unsigned long long>(c.probes),
            static_cast<unsigned long long>(c.beyondSpares));
  if (!provider_->emulated()) return;
  // Credits exist so that no frame ever finds no receive: on the emulated
  // fabric, which counts them, a drop outside a fault is a bug, or the
  // price of one (a duplicate takes a receive no credit paid for), or a
  // control frame that had to go beyond the peer's spare receives (a
  // probe when a busy peer went silent: the peers' counts above say).
  const EmuFaultCounts hit = emuFaultCounts();
  if (hit.dropped + hit.duplicated + hit.delayed + hit.failed > 0)
    MCL_LOG(Info, kLogInit,
            "rank %d: MCL_EMU_FAULTS in this process: %llu frames dropped, "
            "%llu duplicated, %llu delayed, %llu failed",
            rank_, static_cast<unsigned long long>(hit.dropped),
            static_cast<unsigned long long>(hit.duplicated),
            static_cast<unsigned long long>(hit.delayed),
            static_cast<unsigned long long>(hit.failed));
  uint64_t dropped = emuFramesDropped();
  if (dropped > 0 && hit.duplicated > 0)
    MCL_LOG(Info, kLogInit,
            "rank %d: the emulated fabric dropped %llu frame(s) in this "
            "process (UC: no receive was posted when they arrived)",
            rank_, static_cast<unsigned long long>(dropped));
  else if (dropped > 0)
    MCL_LOG(Warn, kLogInit,
            "rank %d: the emulated fabric dropped %llu frame(s) in this "
            "process (UC: no receive was posted when they arrived)",
            rank_, static_cast<unsigned long long>(dropped));
  else
    MCL_LOG(Info, kLogInit, "rank %d: the emulated fabric dropped no frame",
            rank_);
}

// Opens a device and checks, before any queue pair is made, that it can
// take what the options ask: the queue depth and the queue-pair type.
std::unique_ptr<DeviceContext> RdmaWires::openChecked(
    const std::string& device) {
  std::unique_ptr<DeviceContext> ctx = provider_->open(device);
  const DeviceInfo& info = ctx->info();
  if (info.maxQpWr > 0 && options_.shape.depth > info.maxQpWr)
    throw error(mclInvalidArgument,
                "rank %d: MCL_RDMA_DEPTH=%d is more than %s takes per queue "
                "(%d)",
                rank_, options_.shape.depth, device.c_str(), info.maxQpWr);
  if (info.maxPostedRecvs > 0 && options_.shape.depth > info.maxPostedRecvs)
    throw error(mclInvalidArgument,
                "rank %d: MCL_RDMA_DEPTH=%d is more than %s takes: at most "
                "%d receives posted per queue pair (%s); use "
                "MCL_RDMA_DEPTH=%d or less",
                rank_, options_.shape.depth, device.c_str(),
                info.maxPostedRecvs, info.recvLimitSource.c_str(),
                info.maxPostedRecvs);
  if (options_.qpType == QpType::RC && !info.rcSupported)
    throw error(mclInvalidArgument,
                "rank %d: MCL_RDMA_QP=rc, but %s offers UC queue pairs only "
                "(Apple's Thunderbolt RDMA): use MCL_RDMA_QP=uc",
                rank_, device.c_str());
  return ctx;
}

std::vector<PortReport> RdmaWires::probePorts() {
  std::vector<PortReport> reports;
  for (const DeviceInfo& info : provider_->devices()) {
    const auto& kept = options_.devices;
    if (!kept.empty() &&
        std::find(kept.begin(), kept.end(), info.name) == kept.end())
      continue;
    PortReport r;
    r.device = info.name;
    r.netdev = info.netdev;
    try {
      auto& ctx = contexts_[info.name];
      if (!ctx) ctx = openChecked(info.name);
      const PortInfo port = ctx->queryPort();
      const std::array<uint8_t, 16>& g = port.gid;
      if (port.state != PortState::Active)
        r.problem = std::string("the port is ") +
                    (port.state == PortState::Down ? "down" : "not active") +
                    ": check the cable" +
                    (info.netdev.empty() ? "" : " on " + info.netdev);
      else if (port.gidIndex >= 0)
        r.ipv4 = std::to_string(g[12]) + "." + std::to_string(g[13]) + "." +
                 std::to_string(g[14]) + "." + std::to_string(g[15]);
      if (r.problem.empty()) {
        // Made and dropped: a provider that refuses this queue pair says so
        // now, while another transport can still take the pair.
        std::unique_ptr<CompletionQueue> cq =
            ctx->createCompletionQueue(2 * options_.shape.depth);
        createQueuePair(*ctx, *cq).reset();
      }
    } catch (const Error& e) {
      if (e.code() == mclInvalidArgument || e.code() == mclInvalidUsage)
        throw;  // a setting this device cannot take: the user's to fix
      r.problem = e.what();
      contexts_.erase(info.name);
    }
    reports.push_back(std::move(r));
  }
  return reports;
}

// A queue pair as the options ask. Inline data is asked for only under
// MCL_RDMA_INLINE=1; a provider may refuse the request outright (Apple's is
// not known to take it), and then the queue pair is made without.
std::unique_ptr<QueuePair> RdmaWires::createQueuePair(DeviceContext& ctx,
                                                      CompletionQueue& cq) {
  QpOptions qo;
  qo.type = options_.qpType;
  qo.sendDepth = options_.shape.depth;
  qo.recvDepth = options_.shape.depth;
  qo.maxMessageBytes = options_.shape.frameBytes;
  qo.inlineBytes = options_.inlineSends ? kInlineBytesAsked : 0;
  if (qo.inlineBytes == 0) return ctx.createQueuePair(cq, qo);
  try {
    return ctx.createQueuePair(cq, qo);
  } catch (const Error& e) {
    MCL_LOG(Info, kLogInit,
            "rank %d: MCL_RDMA_INLINE=1, but %s refused inline data (%s): "
            "sending without",
            rank_, ctx.info().name.c_str(), e.what());
    qo.inlineBytes = 0;
    return ctx.createQueuePair(cq, qo);
  }
}

namespace {
size_t usedCables(const WirePlan& wires) {
  return static_cast<size_t>(
      std::count_if(wires.begin(), wires.end(),
                    [](const auto& cable) { return !cable.first.empty(); }));
}
}  // namespace

size_t RdmaWires::cableCount() const {
  size_t cables = 0;
  for (const auto& [peer, wires] : plan_) cables += usedCables(wires);
  return cables;
}

size_t RdmaWires::mostCablesToOnePeer() const {
  size_t most = 0;
  for (const auto& [peer, wires] : plan_)
    most = std::max(most, usedCables(wires));
  return most;
}

std::map<int, WirePlan> RdmaWires::emulatedPlan(
    const std::vector<int>& peers, const std::vector<int>& macOfRank) const {
  // The fabric's devices per Mac and their cables, through the provider:
  // a device's peer is found by the emulated port's cable.
  std::map<int, WirePlan> plan;
  const EmuFabric* fabric = emuFabricOf(*provider_);
  if (fabric == nullptr)
    throw error(mclInternalError, "emulatedPlan needs the emu provider");
  const int me = macOfRank.at(size_t(rank_));
  for (int peer : peers) {
    const int mac = macOfRank.at(size_t(peer));
    for (const auto& [a, b] : fabric->cables) {
      if (a.mac == me && b.mac == mac)
        plan[peer].push_back({a.device, b.device});
      if (b.mac == me && a.mac == mac)
        plan[peer].push_back({b.device, a.device});
    }
  }
  return plan;
}

void RdmaWires::createWires(const std::map<int, WirePlan>& plan) {
  plan_ = plan;
  const FrameShape& shape = options_.shape;
  for (const auto& [peer, cables] : plan) {
    if (cables.size() > kMaxWires)
      throw error(mclInvalidUsage,
                  "rank %d: %zu cables to rank %d; mcl uses at most %zu", rank_,
                  cables.size(), peer, kMaxWires);
    for (uint32_t channel = 0; channel < kRdmaChannels; ++channel)
      for (uint32_t i = 0; i < cables.size(); ++i) {
        const std::string& device = cables[i].first;
        // Left out (MCL_RDMA_DEVICES): the other cables keep their index,
        // so both ends pair the same cable or find none to pair.
        if (device.empty()) continue;
        auto& ctx = contexts_[device];
        if (!ctx) ctx = openChecked(device);
        PortInfo port = ctx->queryPort();
        if (port.state != PortState::Active)
          throw error(mclSystemError,
                      "rank %d: %s%s (toward rank %d) is down: check the "
                      "cable",
                      rank_, provider_->emulated() ? "emulated " : "",
                      device.c_str(), peer);
        Wire w;
        w.context = ctx.get();
        w.device = device;
        w.remoteDevice = cables[i].second;
        w.sendFrames =
            platform::PageBuffer(sendFramesPerWire(shape) * shape.frameBytes);
        w.recvFrames =
            platform::PageBuffer(size_t(shape.depth) * shape.frameBytes);
        // Whole pages, as JACCL registers them: a registration pins whole
        // pages anyway.
        w.sendMr =
            ctx->registerMemory(w.sendFrames.data(), w.sendFrames.pagedSize());
        w.recvMr =
            ctx->registerMemory(w.recvFrames.data(), w.recvFrames.pagedSize());
        w.cq = ctx->createCompletionQueue(2 * shape.depth);
        w.qp = createQueuePair(*ctx, *w.cq);
        wires_.push_back({peer, channel, i, std::move(w)});
      }
  }
}

std::vector<uint8_t> RdmaWires::addresses() const {
  std::vector<WireAddress> wires;
  for (const PendingWire& p : wires_)
    wires.push_back({static_cast<uint32_t>(p.peer), p.channel, p.index,
                     p.wire.qp->address()});
  return encodeAddresses(wires);
}

std::vector<uint8_t> encodeAddresses(const std::vector<WireAddress>& wires) {
  WireWriter out;
  out.u32(static_cast<uint32_t>(wires.size()));
  for (const WireAddress& w : wires) {
    out.u32(w.target);
    out.u32(w.channel);
    out.u32(w.index);
    out.raw(w.address.gid.data(), w.address.gid.size());
    out.u32(w.address.qpn);
    out.u32(w.address.psn);
    out.u32(w.address.lid);
    out.u32(w.address.mtu);
  }
  return out.take();
}

std::vector<WireAddress> decodeAddresses(const std::vector<uint8_t>& bytes) {
  WireReader in(bytes.data(), bytes.size(), "rdma addresses");
  const uint32_t count = in.u32();
  // Each entry is 44 bytes: a count beyond what follows is a broken
  // message, refused before anything is allocated for it.
  constexpr size_t kEntryBytes = 4 * 3 + 16 + 4 * 4;
  if (count > in.remaining() / kEntryBytes)
    throw error(mclRemoteError,
                "rdma addresses: %u queue pairs announced in %zu bytes", count,
                in.remaining());
  std::vector<WireAddress> wires(count);
  for (WireAddress& w : wires) {
    w.target = in.u32();
    w.channel = in.u32();
    w.index = in.u32();
    in.raw(w.address.gid.data(), w.address.gid.size());
    w.address.qpn = in.u32();
    w.address.psn = in.u32();
    const uint32_t lid = in.u32();
    if (lid > UINT16_MAX)
      throw error(mclRemoteError, "rdma addresses: LID %u is not 16 bits", lid);
    w.address.lid = static_cast<uint16_t>(lid);
    w.address.mtu = in.u32();
  }
  in.finish();  // bytes past the entries: not a message this build sent
  return wires;
}

int RdmaWires::fewestWiresPerPair(
    const std::vector<std::vector<uint8_t>>& all) {
  int fewest = 0;
  for (const auto& bytes : all) {
    std::map<uint32_t, int> perPeer;  // the collective channel's wires
    for (const WireAddress& w : decodeAddresses(bytes))
      if (w.channel == 0) ++perPeer[w.target];
    for (const auto& [peer, wires] : perPeer)
      fewest = fewest == 0 ? wires : std::min(fewest, wires);
  }
  return fewest;
}

void RdmaWires::connectWires(const std::vector<std::vector<uint8_t>>& all) {
  for (PendingWire& p : wires_) {
    bool found = false;
    for (const WireAddress& w : decodeAddresses(all[size_t(p.peer)]))
      if (int(w.target) == rank_ && w.channel == p.channel &&
          w.index == p.index) {
        p.wire.qp->connect(w.address);
        found = true;
      }
    if (!found)
      throw error(mclInvalidUsage,
                  "rank %d: rank %d made no queue pair for cable %u (%s): the "
                  "two ends disagree on the cables between them",
                  rank_, p.peer, p.index, p.wire.device.c_str());
  }
  std::map<std::pair<int, uint32_t>, std::vector<Wire>> byConnection;
  for (PendingWire& p : wires_)
    byConnection[{p.peer, p.channel}].push_back(std::move(p.wire));
  wires_.clear();
  for (auto& [key, wires] : byConnection)
    ready_[key] = std::make_unique<RdmaConnection>(
        rank_, key.first, std::move(wires), options_.shape, describe(key.first),
        connections_);
}

std::unique_ptr<Connection> RdmaWires::connect(int peer, uint32_t channel) {
  auto it = ready_.find({peer, channel});
  if (it == ready_.end()) {
    std::string kept;
    for (const std::string& d : options_.devices)
      kept += (kept.empty() ? "" : ",") + d;
    throw error(
        mclInvalidUsage, "rank %d: no RDMA cable reaches rank %d%s%s%s", rank_,
        peer,
        provider_->emulated() ? " on the emulated fabric (MCL_EMU_FABRIC)" : "",
        kept.empty() ? "" : " among the devices MCL_RDMA_DEVICES keeps: ",
        kept.c_str());
  }
  std::unique_ptr<Connection> c = std::move(it->second);
  ready_.erase(it);
  return c;
}

size_t RdmaWires::capacityPerWire() const {
  return usableCapacity(options_.shape);
}

std::string RdmaWires::describe(int peer) const {
  std::string s = provider_->emulated() ? "rdma (emulated) " : "rdma ";
  auto it = plan_.find(peer);
  if (it != plan_.end()) {
    const char* separator = "";
    for (const auto& [local, remote] : it->second) {
      if (local.empty()) continue;  // left out by MCL_RDMA_DEVICES
      s += separator + local + "->" + remote;
      separator = " + ";
    }
  }
  return s + ", " + qpTypeName(options_.qpType);
}

}  // namespace mcl::transport::rdma
