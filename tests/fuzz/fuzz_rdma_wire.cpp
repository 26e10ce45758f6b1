// What an RDMA peer sends that this side decodes; the first byte picks
// which:
//   0  the queue-pair addresses all-gathered at init (rdma_wires.h)
//   1  frames arriving on the wires of a connection (rdma_connection.h),
//      through a fake queue pair: what the reader gets must be exactly the
//      data frames the protocol accepts (a fresh transmission number, the
//      next piece of its wire), in sequence order, byte for byte; a
//      duplicate, an old piece or one after a gap is dropped, never read
//   2  a topology file (JSON), then each rank's wire plan from it
//      (transports/rdma/rdma_wire_plan.h): both ends of a pair must list the
//      same cables in the same order
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_check.h"
#include "platform/page_buffer.h"
#include "topology/cluster_json.h"
#include "transports/rdma/rdma_connection.h"
#include "transports/rdma/rdma_wire_plan.h"
#include "transports/rdma/rdma_wires.h"

namespace {

namespace rdma = mcl::transport::rdma;
using mcl::fuzz::acceptedOr;
using mcl::fuzz::check;
using Bytes = std::vector<uint8_t>;

bool sameAddress(const rdma::WireAddress& a, const rdma::WireAddress& b) {
  return a.target == b.target && a.channel == b.channel && a.index == b.index &&
         a.address.gid == b.address.gid && a.address.qpn == b.address.qpn &&
         a.address.psn == b.address.psn && a.address.lid == b.address.lid &&
         a.address.mtu == b.address.mtu;
}

void queuePairAddresses(const uint8_t* data, size_t size) {
  const Bytes bytes(data, data + size);
  std::vector<rdma::WireAddress> wires;
  if (!acceptedOr(mclRemoteError,
                  [&] { wires = rdma::decodeAddresses(bytes); }))
    return;
  check(4 + wires.size() * 44 <= size, "every address announced is present");
  std::vector<rdma::WireAddress> again =
      rdma::decodeAddresses(rdma::encodeAddresses(wires));
  check(again.size() == wires.size(), "address count round trip");
  for (size_t i = 0; i < wires.size(); ++i)
    check(sameAddress(wires[i], again[i]), "address round trip");
  int fewest = rdma::RdmaWires::fewestWiresPerPair({bytes, bytes});
  check(fewest >= 0 && size_t(fewest) <= wires.size(),
        "fewest wires per pair within what was announced");
}

// ---- frames through a fake queue pair ----

constexpr int kDepth = 4;
constexpr uint32_t kFrameBytes = 256;

struct FakeRegion final : rdma::MemoryRegion {
  uint32_t lkey() const override { return 0; }
};

struct FakeCompletions final : rdma::CompletionQueue {
  std::deque<rdma::Completion> ready;
  int poll(rdma::Completion* out, int max) override {
    int n = 0;
    for (; n < max && !ready.empty(); ++n) {
      out[n] = ready.front();
      ready.pop_front();
    }
    return n;
  }
};

// Keeps receives in the order posted, as a queue pair does, and completes
// every send at once.
struct FakeQueuePair final : rdma::QueuePair {
  struct Receive {
    uint64_t wrId;
    std::byte* data;
    uint32_t bytes;
  };
  FakeCompletions* cq = nullptr;
  std::deque<Receive> receives;

  rdma::QpAddress address() const override { return {}; }
  void connect(const rdma::QpAddress&) override {}
  void postSend(uint64_t wrId, const rdma::MemoryRegion&, const std::byte*,
                uint32_t bytes) override {
    check(bytes >= rdma::kFrameHeaderBytes && bytes <= kFrameBytes,
          "a frame sent fits the frame size");
    rdma::Completion c;
    c.wrId = wrId;
    cq->ready.push_back(c);
  }
  void postRecv(uint64_t wrId, const rdma::MemoryRegion&, std::byte* data,
                uint32_t bytes) override {
    receives.push_back({wrId, data, bytes});
  }
};

// Reads the input front to back; zeros once it runs out.
struct Cursor {
  const uint8_t* data;
  size_t size;
  bool empty() const { return size == 0; }
  uint8_t u8() {
    if (size == 0) return 0;
    --size;
    return *data++;
  }
  std::span<const uint8_t> take(size_t n) {
    n = std::min(n, size);
    std::span<const uint8_t> s(data, n);
    data += n;
    size -= n;
    return s;
  }
};

// Input: wires (1 byte), then frames: wire (1), length (2, little-endian),
// the frame's bytes (header as rdma_connection.cpp lays it out, payload).
void framesOnWires(const uint8_t* data, size_t size) {
  Cursor in{data, size};
  const uint32_t wireCount = 1 + in.u8() % 3;
  std::vector<FakeQueuePair*> qps;
  std::vector<rdma::Wire> wires(wireCount);
  for (rdma::Wire& w : wires) {
    w.device = "rdma_en2";
    w.remoteDevice = "rdma_en3";
    w.sendFrames = mcl::platform::PageBuffer(
        rdma::sendFramesPerWire({kFrameBytes, kDepth}) * kFrameBytes);
    w.recvFrames = mcl::platform::PageBuffer(size_t{kDepth} * kFrameBytes);
    w.sendMr = std::make_unique<FakeRegion>();
    w.recvMr = std::make_unique<FakeRegion>();
    auto cq = std::make_unique<FakeCompletions>();
    auto qp = std::make_unique<FakeQueuePair>();
    qp->cq = cq.get();
    qps.push_back(qp.get());
    w.cq = std::move(cq);
    w.qp = std::move(qp);
  }
  rdma::FrameShape shape;
  shape.frameBytes = kFrameBytes;
  shape.depth = kDepth;
  rdma::RdmaConnection connection(0, 1, std::move(wires), shape, "fuzz",
                                  std::make_shared<rdma::ConnectionSet>());

  std::map<uint64_t, Bytes> accepted;  // data frames not yet read, by seq
  uint64_t nextToRead = 0;
  // The receiver's rules, per wire: the transmission expected next, and
  // the pieces received in order (a data frame's place on its wire is its
  // header's index); a piece in order is taken unless its seq was taken
  // already (after a lost wire, pieces come again over another).
  std::vector<uint64_t> nextTransmission(wireCount, 0);
  std::vector<uint64_t> piecesIn(wireCount, 0);
  acceptedOr(mclRemoteError, [&] {
    while (!in.empty()) {
      FakeQueuePair& qp = *qps[in.u8() % wireCount];
      const size_t low = in.u8();
      const size_t length = low | size_t{in.u8()} << 8;
      std::span<const uint8_t> frame = in.take(length);
      // UC drops a frame that finds no receive posted.
      if (qp.receives.empty()) continue;
      FakeQueuePair::Receive r = qp.receives.front();
      qp.receives.pop_front();
      const uint32_t arrived =
          std::min(static_cast<uint32_t>(frame.size()), r.bytes);
      memcpy(r.data, frame.data(), arrived);
      rdma::Completion c;
      c.wrId = r.wrId;
      c.recv = true;
      c.bytes = arrived;
      qp.cq->ready.push_back(c);
      connection.progress();  // takes the frame, or throws
      rdma::FrameHeader h;
      memcpy(&h, r.data, sizeof(h));
      const uint32_t w = static_cast<uint32_t>(
          std::find(qps.begin(), qps.end(), &qp) - qps.begin());
      // Transmissions before this frame that did not come were lost.
      const auto missed = static_cast<int32_t>(
          h.before - static_cast<uint32_t>(nextTransmission[w]));
      if (missed > 0) nextTransmission[w] += uint64_t(missed);
      bool fresh = true;
      if (h.flags & rdma::kFlagCredited) {
        const auto ahead = static_cast<int32_t>(
            h.transmission - static_cast<uint32_t>(nextTransmission[w]));
        fresh = ahead >= 0;
        if (fresh) nextTransmission[w] += uint64_t(ahead) + 1;
      }
      if (fresh && h.seq != rdma::kControlFrame &&
          h.index == static_cast<uint32_t>(piecesIn[w])) {
        ++piecesIn[w];
        const auto* payload =
            reinterpret_cast<const uint8_t*>(r.data) + rdma::kFrameHeaderBytes;
        if (h.seq >= nextToRead && accepted.count(h.seq) == 0)
          accepted[h.seq] = Bytes(payload, payload + h.bytes);
      }
      // Read whatever is next in sequence, in two parts.
      for (auto it = accepted.find(nextToRead); it != accepted.end();
           it = accepted.find(nextToRead)) {
        std::span<const std::byte> piece = connection.peekRecv();
        check(!piece.empty(), "an accepted data frame can be read");
        check(piece.size() == it->second.size() &&
                  memcmp(piece.data(), it->second.data(), piece.size()) == 0,
              "the reader gets the accepted frame's payload");
        const size_t first = (piece.size() + 1) / 2;
        connection.releaseRecv(first);
        if (first < piece.size())
          connection.releaseRecv(connection.peekRecv().size());
        accepted.erase(it);
        ++nextToRead;
      }
      check(!accepted.empty() || connection.peekRecv().empty(),
            "nothing to read before the next frame in sequence arrives");
    }
  });
}

// ---- wire plans from a topology file ----

void wirePlans(const uint8_t* data, size_t size) {
  mcl::topology::Cluster cluster;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (!acceptedOr(mclInvalidArgument, [&] {
        cluster = mcl::topology::clusterFromText(text, "fuzz.json");
      }))
    return;
  // One rank per host, its first; every other host's first rank a peer.
  // Each reports a usable device on every interface a cable ends on, its
  // GID mapping the interface's address; the plans of both ends of every
  // pair must then mirror each other.
  std::vector<int> firstRanks;
  int nranks = 0;
  for (const auto& h : cluster.hosts) {
    if (!h.ranks.empty()) firstRanks.push_back(h.ranks.front());
    for (int r : h.ranks) nranks = std::max(nranks, r + 1);
  }
  if (nranks > 4096) return;
  std::vector<rdma::RankRdma> ranks(static_cast<size_t>(nranks));
  for (int rank : firstRanks) {
    const int host = cluster.hostOfRank(rank);
    for (const auto& l : cluster.links)
      for (const auto* end : {&l.a, &l.b})
        if (end->host == host && !end->interface.empty())
          ranks[size_t(rank)].ports.push_back(
              {"rdma_" + end->interface, end->interface, end->address, ""});
  }
  for (int a : firstRanks)
    for (int b : firstRanks) {
      if (a == b || cluster.hostOfRank(a) == cluster.hostOfRank(b)) continue;
      const rdma::PairPlan ab = rdma::planOnCluster(cluster, ranks, a, b);
      const rdma::PairPlan ba = rdma::planOnCluster(cluster, ranks, b, a);
      check((ab.verdict.answer == mcl::transport::Verdict::Yes) ==
                !ab.wires.empty(),
            "a pair is joined exactly when some wire is usable");
      check(ab.verdict.answer == ba.verdict.answer &&
                ab.verdict.decline == ba.verdict.decline,
            "both ends of a pair reach the same verdict");
      check(ab.wires.size() == ba.wires.size(), "both ends plan as many wires");
      for (size_t k = 0; k < ab.wires.size(); ++k) {
        check(!ab.wires[k].first.empty() && !ab.wires[k].second.empty(),
              "wires name both devices");
        check(ba.wires[k].first == ab.wires[k].second &&
                  ba.wires[k].second == ab.wires[k].first,
              "the k-th wire is the same cable from both ends");
      }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  switch (data[0] % 3) {
    case 0:
      queuePairAddresses(data + 1, size - 1);
      break;
    case 1:
      framesOnWires(data + 1, size - 1);
      break;
    default:
      wirePlans(data + 1, size - 1);
      break;
  }
  return 0;
}
