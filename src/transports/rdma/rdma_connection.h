// A connection to a peer over RDMA: one queue pair per wire (cable), pieces
// striped over the wires (piece k on wire k % wires), each piece one SEND
// of a registered frame with a 64-byte header {sequence, length, credits}.
// Receives are posted before the peer may send into them: the sender spends
// one credit per frame and the receiver returns credits (cumulative counts
// per wire) in the headers of its own frames, or in a credit-only frame when
// it has nothing to send. So on a UC queue pair, which drops a frame that
// finds no receive, nothing is ever dropped; a frame lost anyway (a link
// that failed) shows as a gap in a wire's sequence and fails the operation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "platform/page_buffer.h"
#include "transports/rdma/verbs.h"
#include "transports/transport.h"

namespace mcl::transport::rdma {

constexpr size_t kFrameHeaderBytes = 64;
constexpr size_t kMaxWires = 8;

struct FrameShape {
  uint32_t frameBytes = 4096;  // header + payload; MCL_RDMA_FRAME_BYTES
  int depth = 32;              // receives (and sends) per wire
};

// The buffering of one wire that data may fill: depth - 1 frames (one
// credit stays for credit-only frames), rounded so that half of it is a
// whole number of frames. Ring rounds are sized from half of it.
size_t usableCapacity(const FrameShape& shape);

// One wire: a connected queue pair with its completion queue and the
// registered send and receive frames. The device context outlives it.
// Members are destroyed bottom up: the queue pair before its completion
// queue, both before the memory they use.
struct Wire {
  DeviceContext* context = nullptr;  // owned by the device; outlives the wire
  std::string device;                // local device, for messages
  std::string remoteDevice;
  platform::PageBuffer sendFrames;  // registered: page-aligned (page_buffer.h)
  platform::PageBuffer recvFrames;
  std::unique_ptr<MemoryRegion> sendMr;
  std::unique_ptr<MemoryRegion> recvMr;
  std::unique_ptr<CompletionQueue> cq;
  std::unique_ptr<QueuePair> qp;
};

class RdmaConnection final : public Connection {
 public:
  // wires: created and connected; their receive frames are posted here.
  RdmaConnection(int rank, int peerRank, std::vector<Wire> wires,
                 const FrameShape& shape, std::string link);
  ~RdmaConnection() override;

  std::span<std::byte> acquireSend(size_t maxBytes) override;
  void commitSend(size_t bytes) override;
  std::span<const std::byte> peekRecv() override;
  void releaseRecv(size_t bytes) override;
  // Also checks each wire's port: a cable pulled on UC gives no error, only
  // silence, so a waiting operation asks the port (and fails naming it).
  bool peerAlive() const override;
  // False once any wire said farewell: the peer reposts no more receives,
  // so no credit will come, even while a piece of its own is unread here.
  bool peerAcceptsSends() const override;
  std::string peerGoneReason() const override;
  // A frame of its own on every wire with a credit and a send to spare,
  // after the wire's data (a queue pair delivers in order).
  void sayFarewell(const std::string& reason) override;
  const char* linkName() const override { return link_.c_str(); }
  void progress() override;
  bool drained() const override;
  uint64_t bytesHandedOver() const override { return bytesSent_; }

 private:
  struct WireState {
    uint64_t sendsPosted = 0;     // frames (data and credit-only) posted
    uint64_t sendsDone = 0;       // their completions
    uint32_t creditsGranted = 0;  // cumulative, from the peer's headers
    uint32_t framesSent = 0;      // cumulative frames that used a credit
    uint32_t reposted = 0;        // cumulative receives reposted here
    uint32_t repostedTold = 0;    // the last count sent to the peer
    uint32_t framesReceived = 0;  // cumulative frames that arrived
    uint32_t dataReposted = 0;    // reposts after data frames
    uint32_t dataRepostedTold = 0;
    uint64_t nextRecvSeq = 0;       // the sequence expected next on this wire
    bool peerSaidFarewell = false;  // no data comes after it on this wire
  };
  struct Arrived {
    bool present = false;
    uint32_t wire = 0;
    uint32_t slot = 0;
    uint32_t bytes = 0;
  };

  std::byte* sendFrame(uint32_t wire, uint64_t index);
  std::byte* recvFrame(uint32_t wire, uint32_t slot);
  void post(uint32_t wire, uint64_t seq, uint32_t payload);
  void postReceive(uint32_t wire, uint32_t slot);
  void writeCredits(std::byte* header);
  void handleReceive(uint32_t wire, const Completion& c);
  void maybeReturnCredits();
  uint32_t creditsLeft(uint32_t wire) const;
  [[noreturn]] void fail(uint32_t wire, const std::string& what) const;

  int rank_;
  int peerRank_;
  std::vector<Wire> wires_;
  std::vector<WireState> state_;
  FrameShape shape_;
  std::string link_;
  uint64_t nextSendSeq_ = 0;
  bool acquired_ = false;
  uint64_t nextRecvSeq_ = 0;      // the piece peekRecv serves
  uint32_t recvOffset_ = 0;       // consumed bytes of that piece
  std::vector<Arrived> arrived_;  // by sequence % (wires * depth)
  uint64_t bytesSent_ = 0;
  mutable bool broken_ = false;  // set by fail(), also from peerAlive()
  bool saidFarewell_ = false;
  std::string peerFarewell_;  // the reason the peer gave, once in
};

}  // namespace mcl::transport::rdma
