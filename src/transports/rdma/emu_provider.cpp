#include "transports/rdma/emu_provider.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "platform/page_buffer.h"
#include "platform/shared_memory.h"

namespace mcl::transport::rdma {

namespace {

// EOPNOTSUPP as macOS numbers it: the errno Apple's provider gives for RC.
constexpr int kEopnotsuppApple = 102;

std::atomic<uint64_t> droppedFrames{0};
std::atomic<uint64_t> faultFrames[4]{};  // by EmuFrameFaultKind

void countFault(EmuFrameFaultKind kind) {
  faultFrames[size_t(kind)].fetch_add(1, std::memory_order_relaxed);
}

// Thunderbolt carries 4 KiB frames, and Apple's provider does not keep a
// SEND's boundaries on the wire: TN3205, as llama.cpp's Apple transport
// (PR #26421) reads it, says a SEND and the RECV it lands in must cover the
// same number of 4 KiB frames, and that transport pads every SEND to its
// whole receive. Modelled so: a SEND of S bytes is ceil(S / 4096) frames; a
// posted receive of R bytes takes the next ceil(R / 4096) frames off the
// wire, whichever SENDs they belong to, frame k at byte 4096 k of its
// buffer, and completes with the bytes it got. A SEND of fewer frames
// leaves its receive open for the next SEND's frames (two messages in one
// receive), one of more frames spills into the next receive: data in the
// wrong place, which on the hardware nothing reports either. A frame too
// long for the rest of its receive fails the receive (local length error).
constexpr uint32_t kLinkFrameBytes = 4096;
uint32_t tbFrames(uint32_t bytes) {
  return std::max<uint32_t>(1, (bytes + kLinkFrameBytes - 1) / kLinkFrameBytes);
}

// A rule of Apple's provider broken: the verb fails as a provider's would,
// with an errno, and the text says which rule (a test reads it).
[[noreturn]] void refuse(const std::string& verb, int err,
                         const std::string& rule) {
  throw error(mclSystemError,
              "%s failed: %s (errno %d); the emulated Apple provider "
              "refuses it: %s",
              verb.c_str(), std::strerror(err), err, rule.c_str());
}

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A queue pair's inbound wire, in shared memory: the peer's queue pair
// writes frames (head), this one takes them (tail). Single producer, single
// consumer, as a connected UC/RC queue pair is.
struct WireHeader {
  alignas(64) std::atomic<uint64_t> head;
  alignas(64) std::atomic<uint64_t> tail;
  alignas(64) std::atomic<int32_t> ownerPid;
  uint32_t slots;
  uint32_t frameBytes;
};

struct EmuFrameHeader {
  int64_t arrivalNs;  // when the last bit reaches the receiver's port
  uint32_t bytes;
  uint32_t reserved;
};

constexpr size_t kHeaderBytes = (sizeof(WireHeader) + 63) / 64 * 64;

size_t slotStride(uint32_t frameBytes) {
  return (sizeof(EmuFrameHeader) + frameBytes + 63) / 64 * 64;
}

EmuFrameHeader* frameAt(WireHeader* w, uint64_t index) {
  auto* base = reinterpret_cast<std::byte*>(w) + kHeaderBytes;
  return reinterpret_cast<EmuFrameHeader*>(
      base + (index % w->slots) * slotStride(w->frameBytes));
}

std::string wireName(const std::string& ns, int mac, uint32_t qpn) {
  return "/mcl-e-" + ns + "-" + std::to_string(mac) + "-" + std::to_string(qpn);
}

// The fabric and this Mac, shared by every object the provider makes.
struct EmuState {
  explicit EmuState(EmuSettings settings)
      : s(std::move(settings)),
        dice(s.fabric.faults.frames,
             std::hash<std::string>{}(s.nameSpace) ^ uint64_t(s.mac)) {}
  EmuSettings s;
  EmuFaultDice dice;
  int64_t startNs = nowNs();
  uint32_t nextQpn = 1;

  // A cable is down when a fault names either of its ends; a silent one
  // (`silent` too: any fault) loses every frame though its ports are up.
  bool cableDown(int mac, const std::string& device, int64_t atNs,
                 bool silentToo = false) const {
    EmuEnd peer = s.fabric.peerOf(mac, device);
    for (const EmuPortFault& f : s.fabric.faults.ports) {
      if (atNs < startNs + f.afterMs * 1000000 || (f.silent && !silentToo))
        continue;
      if ((f.mac == mac && f.device == device) ||
          (f.mac == peer.mac && f.device == peer.device))
        return true;
    }
    return false;
  }
  int deviceIndex(const std::string& device) const {
    const auto& names = s.fabric.devices[size_t(s.mac)];
    return int(std::find(names.begin(), names.end(), device) - names.begin());
  }
};

// GID ::ffff:169.254.<mac>.<device index + 1>: unique per port, and shaped
// like the IPv4-mapped GID a real Thunderbolt port has.
std::array<uint8_t, 16> gidOf(int mac, int device) {
  std::array<uint8_t, 16> g{};
  g[10] = 0xff;
  g[11] = 0xff;
  g[12] = 169;
  g[13] = 254;
  g[14] = static_cast<uint8_t>(mac);
  g[15] = static_cast<uint8_t>(device + 1);
  return g;
}

std::atomic<int64_t> liveContexts{0};
std::atomic<int64_t> liveQueuePairs{0};
std::atomic<int64_t> liveCompletionQueues{0};
std::atomic<int64_t> liveMemoryRegions{0};

// Counts an object of one kind while it lives (see emuLiveObjects).
class Counted {
 public:
  explicit Counted(std::atomic<int64_t>& count) : count_(count) { ++count_; }
  ~Counted() { --count_; }
  Counted(const Counted&) = delete;
  Counted& operator=(const Counted&) = delete;

 private:
  std::atomic<int64_t>& count_;
};

class EmuMemory final : public MemoryRegion {
 public:
  EmuMemory(std::byte* data, size_t bytes, uint32_t key)
      : data_(data), bytes_(bytes), key_(key) {}
  uint32_t lkey() const override { return key_; }
  bool covers(const std::byte* p, uint32_t n) const {
    return p >= data_ && p + n <= data_ + bytes_;
  }

 private:
  std::byte* data_;
  size_t bytes_;
  uint32_t key_;
  Counted counted_{liveMemoryRegions};
};

class EmuQueuePair;

class EmuCompletionQueue final : public CompletionQueue {
 public:
  int poll(Completion* out, int max) override;
  void push(Completion c) { ready_.push_back(std::move(c)); }
  std::vector<EmuQueuePair*> qps;

 private:
  std::deque<Completion> ready_;
  Counted counted_{liveCompletionQueues};
};

class EmuQueuePair final : public QueuePair {
 public:
  EmuQueuePair(std::shared_ptr<EmuState> state, std::string device,
               EmuCompletionQueue& cq, const QpOptions& o)
      : state_(std::move(state)),
        device_(std::move(device)),
        cq_(cq),
        options_(o),
        qpn_(state_->nextQpn++) {
    name_ = wireName(state_->s.nameSpace, state_->s.mac, qpn_);
    uint32_t slots = static_cast<uint32_t>(o.recvDepth) + 8;
    // Reserved now: the emulated wire lives in /dev/shm, and a page it
    // cannot supply later would be a SIGBUS, not an error.
    const size_t bytes = kHeaderBytes + slots * slotStride(o.maxMessageBytes);
    try {
      inbound_ = platform::SharedMemory::create(name_, bytes, true);
    } catch (const std::system_error& e) {
      throw error(mclSystemError,
                  "ibv_create_qp on emulated %s: the emulated wire needs %zu "
                  "bytes of /dev/shm: %s (make /dev/shm larger)",
                  device_.c_str(), bytes, e.what());
    }
    in_ = static_cast<WireHeader*>(inbound_.data());
    in_->slots = slots;
    in_->frameBytes = o.maxMessageBytes;
    in_->ownerPid.store(getpid(), std::memory_order_release);
    cq_.qps.push_back(this);
  }
  ~EmuQueuePair() override {
    std::erase(cq_.qps, this);
    platform::SharedMemory::unlink(name_);  // in case no peer took it
  }

  QpAddress address() const override {
    QpAddress a;
    a.gid = gidOf(state_->s.mac, state_->deviceIndex(device_));
    a.qpn = qpn_;
    a.mtu = kEmuPathMtu;
    return a;
  }

  void connect(const QpAddress& remote) override {
    if (remote.mtu != kEmuPathMtu)
      refuse("ibv_modify_qp to RTR on emulated " + device_, EINVAL,
             "path MTU " + std::to_string(remote.mtu) + " (Thunderbolt " +
                 "RDMA runs at " + std::to_string(kEmuPathMtu) + ")");
    int mac = remote.gid[14];
    int index = remote.gid[15] - 1;
    const auto& fabric = state_->s.fabric;
    EmuEnd peer = fabric.peerOf(state_->s.mac, device_);
    bool cabled = mac < fabric.macs && index >= 0 &&
                  size_t(index) < fabric.devices[size_t(mac)].size() &&
                  peer.mac == mac &&
                  peer.device == fabric.devices[size_t(mac)][size_t(index)];
    if (!cabled) {
      // Real hardware would not say: frames just go nowhere.
      MCL_LOG(Warn, kLogInit,
              "emulated fabric: %s of Mac %d is not cabled to the queue "
              "pair it is told to reach (Mac %d): its frames will be lost",
              device_.c_str(), state_->s.mac, mac);
      connected_ = true;
      return;
    }
    peer_ = peer;
    std::string name = wireName(state_->s.nameSpace, mac, remote.qpn);
    outbound_ = platform::SharedMemory::open(name);
    platform::SharedMemory::unlink(name);  // both ends have it mapped now
    out_ = static_cast<WireHeader*>(outbound_.data());
    connected_ = true;
  }

  void postSend(uint64_t wrId, const MemoryRegion& mr, const std::byte* data,
                uint32_t bytes) override {
    check(mr, data, bytes, "send");
    if (sends_.size() >= size_t(options_.sendDepth))
      throw error(mclInternalError, "emulated %s: send queue full (%d)",
                  device_.c_str(), options_.sendDepth);
    if (bytes > options_.maxMessageBytes ||
        (out_ != nullptr && bytes > out_->frameBytes))
      throw error(mclInternalError, "emulated %s: SEND of %u bytes > %u",
                  device_.c_str(), bytes, options_.maxMessageBytes);
    sends_.push_back({wrId, data, bytes, false, 0, 0, {}});
    // A NIC sends on its own once the request is posted; the receiver's
    // polling then finds the frame, whatever its sender does next.
    progressSends(nowNs());
  }

  void postRecv(uint64_t wrId, const MemoryRegion& mr, std::byte* data,
                uint32_t bytes) override {
    check(mr, data, bytes, "receive");
    if (recvs_.size() >= size_t(kEmuMaxPostedReceives))
      refuse("ibv_post_recv on emulated " + device_, ENOMEM,
             "more than " + std::to_string(kEmuMaxPostedReceives) +
                 " receives posted on one queue pair (the most Apple's "
                 "provider takes: hellas-ai/thunderbolt-ibverbs saw ENOMEM "
                 "beyond it)");
    if (recvs_.size() >= size_t(options_.recvDepth))
      throw error(mclInternalError, "emulated %s: receive queue full (%d)",
                  device_.c_str(), options_.recvDepth);
    recvs_.push_back({wrId, data, bytes, nowNs(), 0, 0});
  }

  // The "NIC": moves frames out and in, and completes work requests.
  void progress();

 private:
  struct Send {
    uint64_t wrId;
    const std::byte* data;
    uint32_t bytes;
    bool onWire = false;
    int64_t doneNs = 0;  // left the port (UC completion)
    uint64_t frame = 0;  // its index on the wire (RC completion)
    std::string error;   // a completion error asked for (MCL_EMU_FAULTS)
  };
  struct Recv {
    uint64_t wrId;
    std::byte* data;
    uint32_t bytes;
    int64_t postedNs;
    uint32_t frames;  // Thunderbolt frames placed so far
    uint32_t got;     // their bytes
  };

  void check(const MemoryRegion& mr, const std::byte* data, uint32_t bytes,
             const char* what) const {
    if (!connected_)
      throw error(mclInternalError, "emulated %s: %s before connect",
                  device_.c_str(), what);
    if (!static_cast<const EmuMemory&>(mr).covers(data, bytes))
      throw error(mclInternalError,
                  "emulated %s: %s buffer outside its memory region",
                  device_.c_str(), what);
  }
  void progressSends(int64_t now);
  void progressReceives(int64_t now);
  // Places the next Thunderbolt frame of SEND `f` (the takenFrames_-th);
  // false when it must wait (RC, no receive posted).
  bool placeFrame(const EmuFrameHeader* f);

  std::shared_ptr<EmuState> state_;
  std::string device_;
  EmuCompletionQueue& cq_;
  QpOptions options_;
  uint32_t qpn_;
  Counted counted_{liveQueuePairs};
  std::string name_;
  platform::SharedMemory inbound_;
  platform::SharedMemory outbound_;
  WireHeader* in_ = nullptr;
  WireHeader* out_ = nullptr;  // null: not cabled, frames vanish
  EmuEnd peer_;                // the far end of this port's cable
  bool connected_ = false;
  int64_t wireFreeNs_ = 0;
  int64_t lastArrivalNs_ = 0;  // of the last frame sent
  uint32_t takenFrames_ = 0;   // of the SEND at the inbound wire's tail
  std::deque<Send> sends_;
  std::deque<Recv> recvs_;
};

void EmuQueuePair::progressSends(int64_t now) {
  const int mac = state_->s.mac;
  const double nsPerByte = 8.0 / state_->s.gbps;
  const auto latencyNs = static_cast<int64_t>(state_->s.latencyUs * 1000);
  for (Send& s : sends_) {
    if (s.onWire) continue;
    if (state_->cableDown(mac, device_, now, true)) {
      s.onWire = true;  // lost on a dead link; UC still completes it
      s.doneNs = now;
      continue;
    }
    if (out_ == nullptr) {  // not cabled: the frame goes nowhere
      s.onWire = true;
      s.doneNs = now;
      continue;
    }
    uint64_t head = out_->head.load(std::memory_order_relaxed);
    const uint64_t free =
        out_->slots - (head - out_->tail.load(std::memory_order_acquire));
    if (free == 0) break;  // the receiver's wire is full: held back
    const EmuFrameFate fate =
        state_->dice.next(mac, device_, peer_.mac, peer_.device);
    s.onWire = true;
    if (fate.completionError) {
      countFault(EmuFrameFaultKind::CompletionError);
      s.doneNs = now;
      s.error =
          "general error (status 21, vendor error 0x0; emulated: "
          "MCL_EMU_FAULTS wc_error)";
      continue;
    }
    int64_t depart = std::max(now, wireFreeNs_);
    wireFreeNs_ = depart + static_cast<int64_t>(s.bytes * nsPerByte);
    s.doneNs = wireFreeNs_;
    if (fate.drop) {  // left the port, lost on the cable: UC completes it
      countFault(EmuFrameFaultKind::Drop);
      continue;
    }
    if (fate.delayNs > 0) countFault(EmuFrameFaultKind::Delay);
    const int copies = fate.duplicate && free >= 2 ? 2 : 1;
    if (copies == 2) countFault(EmuFrameFaultKind::Duplicate);
    // A cable keeps its order: a frame held back holds back the ones
    // behind it, which arrive after it.
    lastArrivalNs_ =
        std::max(lastArrivalNs_, wireFreeNs_ + latencyNs + fate.delayNs);
    for (int c = 0; c < copies; ++c) {
      EmuFrameHeader* f = frameAt(out_, head);
      f->arrivalNs = lastArrivalNs_;
      f->bytes = s.bytes;
      std::memcpy(f + 1, s.data, s.bytes);
      out_->head.store(++head, std::memory_order_release);
    }
  }
  // A send completes once it left the port, for RC too: a real RC NIC
  // acknowledges without the receiving program's help, which an emulation
  // without a NIC thread cannot copy, so acknowledgements are not modelled
  // (RC keeps its other rule: a frame waits for a receive, never dropped).
  while (!sends_.empty() && sends_.front().onWire &&
         now >= sends_.front().doneNs) {
    Send& done = sends_.front();
    cq_.push({done.wrId, done.error.empty(), false, 0, done.error});
    sends_.pop_front();
  }
}

bool EmuQueuePair::placeFrame(const EmuFrameHeader* f) {
  const bool posted =
      !recvs_.empty() &&
      (recvs_.front().frames > 0 || recvs_.front().postedNs <= f->arrivalNs ||
       options_.type == QpType::RC);
  if (!posted) {
    if (options_.type == QpType::RC) return false;  // RNR: the frame waits
    // UC: no receive for it, and the rest of its SEND goes with it.
    droppedFrames.fetch_add(1, std::memory_order_relaxed);
    takenFrames_ = tbFrames(f->bytes);
    return true;
  }
  Recv& r = recvs_.front();
  const uint32_t offset = takenFrames_ * kLinkFrameBytes;
  const uint32_t chunk = std::min(kLinkFrameBytes, f->bytes - offset);
  ++takenFrames_;
  const uint32_t at = r.frames * kLinkFrameBytes;
  if (at + chunk > r.bytes) {  // the receive fails, the SEND is dropped
    cq_.push({r.wrId, false, true, 0, "local length error"});
    recvs_.pop_front();
    takenFrames_ = tbFrames(f->bytes);
    return true;
  }
  std::memcpy(r.data + at, reinterpret_cast<const std::byte*>(f + 1) + offset,
              chunk);
  r.got += chunk;
  if (++r.frames == tbFrames(r.bytes)) {
    cq_.push({r.wrId, true, true, r.got, ""});
    recvs_.pop_front();
  }
  return true;
}

void EmuQueuePair::progressReceives(int64_t now) {
  const int mac = state_->s.mac;
  for (;;) {
    uint64_t tail = in_->tail.load(std::memory_order_relaxed);
    if (tail == in_->head.load(std::memory_order_acquire)) return;
    EmuFrameHeader* f = frameAt(in_, tail);
    if (f->arrivalNs > now) return;  // still on the cable
    if (state_->cableDown(mac, device_, f->arrivalNs, true)) {
      // Lost with its cable (a port_down fault), not for want of a
      // receive: counted with the faults' drops.
      countFault(EmuFrameFaultKind::Drop);
      takenFrames_ = tbFrames(f->bytes);
    }
    while (takenFrames_ < tbFrames(f->bytes))
      if (!placeFrame(f)) return;
    takenFrames_ = 0;
    in_->tail.store(tail + 1, std::memory_order_release);
  }
}

void EmuQueuePair::progress() {
  if (!connected_) return;
  int64_t now = nowNs();
  progressReceives(now);
  progressSends(now);
}

int EmuCompletionQueue::poll(Completion* out, int max) {
  for (EmuQueuePair* qp : qps) qp->progress();
  int n = 0;
  while (n < max && !ready_.empty()) {
    out[n++] = std::move(ready_.front());
    ready_.pop_front();
  }
  return n;
}

class EmuContext final : public DeviceContext {
 public:
  EmuContext(std::shared_ptr<EmuState> state, DeviceInfo info)
      : state_(std::move(state)), info_(std::move(info)) {}
  const DeviceInfo& info() const override { return info_; }
  PortInfo queryPort() override {
    PortInfo p;
    p.state = state_->cableDown(state_->s.mac, info_.name, nowNs())
                  ? PortState::Down
                  : PortState::Active;
    p.mtu = kEmuPathMtu;
    p.gidIndex = 0;
    p.gid = gidOf(state_->s.mac, state_->deviceIndex(info_.name));
    return p;
  }
  std::unique_ptr<MemoryRegion> registerMemory(void* data,
                                               size_t bytes) override {
    // MLX's JACCL registers page-aligned memory only: the one way known to
    // work on Apple's provider, so the emulation accepts nothing else.
    if (reinterpret_cast<uintptr_t>(data) % platform::pageSize() != 0)
      refuse("ibv_reg_mr of " + std::to_string(bytes) + " bytes on emulated " +
                 info_.name,
             EINVAL,
             "the memory does not start on a page boundary (pages are " +
                 std::to_string(platform::pageSize()) + " bytes here)");
    return std::make_unique<EmuMemory>(static_cast<std::byte*>(data), bytes,
                                       nextKey_++);
  }
  std::unique_ptr<CompletionQueue> createCompletionQueue(int) override {
    return std::make_unique<EmuCompletionQueue>();
  }
  std::unique_ptr<QueuePair> createQueuePair(CompletionQueue& cq,
                                             const QpOptions& o) override {
    const std::string verb = "ibv_create_qp on emulated " + info_.name;
    const EmuSettings& s = state_->s;
    if (o.type == QpType::RC && !s.rc)
      refuse(verb, kEopnotsuppApple,
             "RC queue pairs (Apple's provider makes UC only; MCL_EMU_RC=1 "
             "emulates one that makes RC)");
    if (o.inlineBytes > 0)
      refuse(verb, EINVAL,
             "inline data (" + std::to_string(o.inlineBytes) +
                 " bytes asked; max_inline_data must be 0)");
    if (o.maxMessageBytes > kEmuFrameBytesBefore263 && !s.macos.atLeast(26, 3))
      refuse(verb, EINVAL,
             "frames of " + std::to_string(o.maxMessageBytes) +
                 " bytes on macOS " + s.macos.text() +
                 " (over 4096 bytes needs macOS 26.3)");
    return std::make_unique<EmuQueuePair>(
        state_, info_.name, static_cast<EmuCompletionQueue&>(cq), o);
  }

 private:
  std::shared_ptr<EmuState> state_;
  DeviceInfo info_;
  uint32_t nextKey_ = 1;
  Counted counted_{liveContexts};  // a device opened with its PD
};

class EmuProvider final : public Provider {
 public:
  const EmuFabric& fabric() const { return state_->s.fabric; }
  explicit EmuProvider(EmuSettings s)
      : state_(std::make_shared<EmuState>(std::move(s))) {}
  const char* name() const override { return "emu"; }
  bool emulated() const override { return true; }
  FrameLimit frameLimit() const override {
    const platform::OsVersion& v = state_->s.macos;
    if (v.atLeast(26, 3)) return {};
    return {kEmuFrameBytesBefore263,
            "the emulated provider keeps macOS " + v.text() +
                "'s rules (MCL_EMU_MACOS): frames over 4096 bytes need "
                "macOS 26.3"};
  }
  std::vector<DeviceInfo> devices() override {
    std::vector<DeviceInfo> out;
    for (const std::string& d : state_->s.fabric.devices[size_t(state_->s.mac)])
      out.push_back({d, d.rfind("rdma_", 0) == 0 ? d.substr(5) : d,
                     state_->s.rc, 256, kEmuMaxPostedReceives,
                     "the emulated provider keeps Apple's limit"});
    return out;
  }
  std::unique_ptr<DeviceContext> open(const std::string& device) override {
    for (DeviceInfo& d : devices())
      if (d.name == device) return std::make_unique<EmuContext>(state_, d);
    throw error(mclInvalidArgument,
                "emulated fabric: Mac %d has no device %s (MCL_EMU_FABRIC)",
                state_->s.mac, device.c_str());
  }

 private:
  std::shared_ptr<EmuState> state_;
};

}  // namespace

std::unique_ptr<Provider> openEmuProvider(EmuSettings settings) {
  if (settings.mac < 0 || settings.mac >= settings.fabric.macs)
    throw error(mclInvalidUsage,
                "emulated fabric: rank %d has no Mac: MCL_EMU_FABRIC describes "
                "%d Macs (one row per rank)",
                settings.mac, settings.fabric.macs);
  if (settings.gbps <= 0 || settings.latencyUs < 0)
    throw error(mclInvalidArgument,
                "emulated fabric: MCL_EMU_GBPS must be > 0 and "
                "MCL_EMU_LATENCY_US >= 0");
  return std::make_unique<EmuProvider>(std::move(settings));
}

uint64_t emuFramesDropped() { return droppedFrames.load(); }

EmuFaultCounts emuFaultCounts() {
  auto count = [](EmuFrameFaultKind k) {
    return faultFrames[size_t(k)].load();
  };
  return {count(EmuFrameFaultKind::Drop), count(EmuFrameFaultKind::Duplicate),
          count(EmuFrameFaultKind::Delay),
          count(EmuFrameFaultKind::CompletionError)};
}

EmuLiveObjects emuLiveObjects() {
  return {liveContexts.load(), liveQueuePairs.load(),
          liveCompletionQueues.load(), liveMemoryRegions.load()};
}

const EmuFabric* emuFabricOf(const Provider& provider) {
  auto* emu = dynamic_cast<const EmuProvider*>(&provider);
  return emu != nullptr ? &emu->fabric() : nullptr;
}

}  // namespace mcl::transport::rdma
