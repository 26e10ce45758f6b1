// A connection to a peer over RDMA: one queue pair per wire (cable), pieces
// striped over the wires (piece k on wire k % wires), each piece one SEND
// of a registered frame behind a 64-byte header (rdma_frame.h).
//
// Credits: receives are posted before the peer may send into them; the
// sender spends one credit per data transmission and the receiver grants
// them back (cumulative counts per wire) in the headers of its own frames,
// or in a credit-returning control frame when it has nothing to send. Two
// receives per wire are spare, never granted: probes, their answers,
// requests to resend, farewells and a credit-returning frame of a side
// whose data spent every credit land there, so they get through when the
// data window is full.
//
// Reliability: UC gives no error when a frame is lost (a Linux-to-Mac path
// can lose them; a cable can), so each data transmission is numbered per
// wire, and each frame acknowledges the pieces received in order. The
// receiver drops a duplicate, takes back the credit of a lost
// transmission, and on a gap asks for the wire's data again from what it
// acknowledged (go-back-N within the registered send frames, which keep
// every unacknowledged piece). A sender that hears no acknowledgement for
// a while probes, and the answer says what is missing. Lost and resent
// frames are counted (rdmaLossCounts).
//
// A lost cable: a wire whose port goes down (or whose send completes with
// an error) is given up while another wire to the peer is left. Both ends
// stop using it (every frame's `lost` bits say so), new pieces go round
// the wires left, and the pieces it held that the peer had not
// acknowledged are sent again over them, oldest first, before any new
// one. Pieces carry their sequence number, so the receiver takes each
// wherever it comes and drops one it holds already. Its frames on the
// wires left may all hold pieces newer than one that must come again, and
// only a consumed piece gives its receive back: so from the first loss on,
// the receiver copies each piece out of its receive frame and gives the
// frame back at once (within a window of pieces that bounds the copies).
// With no wire left the connection goes on over its standby, a TCP
// connection to the same peer made at init (rdma_standby.cpp), with a WARN
// naming the cable; without one it fails naming the cable.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "platform/page_buffer.h"
#include "transports/rdma/rdma_frame.h"
#include "transports/rdma/verbs.h"
#include "transports/transport.h"

namespace mcl::transport::rdma {

// Thunderbolt's frame: what a SEND's length is counted in on a Mac.
constexpr uint32_t kTbFrameBytes = 4096;

// The length to SEND `bytes` of a frame with: Apple's provider wants a SEND
// to cover as many 4 KiB Thunderbolt frames as the receive it lands in
// (TN3205, as llama.cpp's Apple transport reads it; the emulated provider
// misplaces the data otherwise), and every receive is `frameBytes` long.
// So a frame is padded to the least length that covers as many: at 4096
// bytes or less, none; at 16 KiB, 12 KiB + 64. Inferred from others'
// reading of Apple's note, not measured on a Mac by this project.
uint32_t sendLength(uint32_t bytes, uint32_t frameBytes);

struct FrameShape {
  uint32_t frameBytes = 4096;  // header + payload; MCL_RDMA_FRAME_BYTES
  int depth = 32;              // receives (and sends) per wire
};

// Receives per wire kept for control frames, never granted as credits.
constexpr int kSpareReceives = 2;
// Send frames per wire kept for control frames, after the data frames.
constexpr int kControlSlots = 4;
// A wire's registered send frames: one per data piece it may have
// unacknowledged (depth), and the control frames'.
inline size_t sendFramesPerWire(const FrameShape& shape) {
  return size_t(shape.depth) + kControlSlots;
}

// The buffering of one wire that data may fill: depth - 2 frames (the
// spare receives are not granted), rounded so that half of it is a whole
// number of frames. Ring rounds are sized from half of it.
size_t usableCapacity(const FrameShape& shape);

// What RDMA connections counted, for mcl-perf's RDMA line, the topology
// dump and qualify: credited transmissions that reached this side (those
// known lost included), the ones known lost (a gap on the wire),
// duplicates dropped, pieces sent again, probes sent, and the uncredited
// control frames sent while the peer had not said a spare receive was free
// (a probe, its answer or a farewell must go; on UC such a frame may find
// no receive and be lost, which the probes recover from).
struct RdmaLossCounts {
  uint64_t received = 0;
  uint64_t lost = 0;
  uint64_t duplicates = 0;
  uint64_t resent = 0;
  uint64_t probes = 0;
  uint64_t beyondSpares = 0;
  // Wires given up mid-job (cables lost) and the pieces they held that
  // went again over the wires left.
  uint64_t wiresLost = 0;
  uint64_t piecesMoved = 0;
};
enum class LossEvent {
  Received,
  Lost,
  Duplicate,
  Resent,
  Probe,
  BeyondSpares,
  WireLost,
  PieceMoved
};
constexpr size_t kLossEvents = 8;
// The whole process' counts (every communicator's).
RdmaLossCounts rdmaLossCounts();

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

class RdmaConnection;

// The RDMA connections of one communicator, so that each keeps answering
// while no operation uses it, and so that a normal close hands every piece
// over first. An operation polls only its own connections, and a rank may
// go on from its last one to wait elsewhere: on a communicator over shared
// memory or TCP, or in its own compute. A frame of that operation lost on
// the way (its last piece, an answer to a probe) can be sent again only by
// this rank, and its peer waits for it: so the set's keeper, a thread of
// its own, services the set whenever no thread uses it, and an operation
// that naps services the other sets of the process as well.
class ConnectionSet {
 public:
  ConnectionSet();
  ~ConnectionSet();  // stops the keeper
  ConnectionSet(const ConnectionSet&) = delete;
  ConnectionSet& operator=(const ConnectionSet&) = delete;
  // Held by the communicator's own thread while it uses the connections
  // (RdmaDevice::beginCalls/endCalls: a turn, a destroy's farewells).
  void beginUse() { use_.lock(); }
  void endUse() { use_.unlock(); }
  // Starts the keeper (once): from then on, every use of the connections
  // must hold beginUse/endUse, as a communicator's turns do. It services
  // the set at most 1 ms apart while a connection has something to
  // recover (a piece unacknowledged, a probe to answer, a resend or a
  // credit waited for), the probes' first interval; when none has, at
  // doubling intervals up to 20 ms, the probes' longest.
  void keepServiced();
  // Services the other communicators' sets of this process that no thread
  // uses now: a sender that waits on one communicator still answers and
  // resends on another, where its peer may wait for a lost frame.
  void serviceOthers();
  // Counts for this set and for the process.
  void count(LossEvent event, uint64_t n);
  RdmaLossCounts counts() const;
  void add(RdmaConnection* c);
  void remove(RdmaConnection* c);
  // True the first time `what` is asked of this set: a cable lost is said
  // once, not once per channel's connection over it.
  bool firstTime(const std::string& what);
  // Polls every connection (acknowledgements, probes, resends). A
  // connection that fails keeps its error for its own next use. True when
  // one of them has something to recover (RdmaConnection::service).
  bool serviceAll();
  // Once per set: every connection acknowledges what it holds and asks for
  // acknowledgements, then all wait, up to `bound`, until the peers hold
  // every piece sent to them or said farewell.
  void finishAll(std::chrono::nanoseconds bound);

 private:
  void keep();

  std::recursive_mutex use_;
  std::mutex mutex_;
  std::vector<RdmaConnection*> connections_;
  std::mutex saidMutex_;
  std::vector<std::string> said_;
  bool finished_ = false;
  std::atomic<uint64_t> counts_[kLossEvents]{};
  std::mutex keeperMutex_;
  std::condition_variable keeperWake_;
  bool keeperStops_ = false;
  std::thread keeper_;
};

class RdmaConnection final : public Connection {
 public:
  // wires: created and connected; their receive frames are posted here.
  RdmaConnection(int rank, int peerRank, std::vector<Wire> wires,
                 const FrameShape& shape, std::string link,
                 std::shared_ptr<ConnectionSet> set);
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
  const char* linkName() const override {
    return onStandby_ ? standbyLink_.c_str() : link_.c_str();
  }
  // rdma_standby.cpp: the TCP connection carried on over once every wire
  // is lost.
  bool keepStandby(std::unique_ptr<Connection> standby) override;
  void tend() override;
  std::string linkTrouble() override;
  void releaseCallerMemory() override;
  void progress() override;
  bool drained() const override;
  uint64_t bytesHandedOver() const override { return bytesSent_; }
  // Before a normal close: the set's connections hand every piece over
  // (ConnectionSet::finishAll), within a second.
  void finish() override;

  // For ConnectionSet: progress() that keeps a failure for later, reading
  // the clock (probes, resends) whatever the polls since. True when the
  // connection has something to recover that the clock drives: a piece
  // unacknowledged, a resend or a credit waited for, an answer or a SEND
  // not yet out.
  bool service() noexcept;
  // Tells the peer what arrived and asks what it holds.
  void askForAcknowledgements();
  // Every piece sent is acknowledged, or the peer will take no more.
  bool handedOver() const;
  // No answer owed to the peer, and every SEND posted has completed.
  bool quiet() const;

 private:
  struct WireState {
    // Sending. Data pieces on this wire are numbered 0, 1, ... (piece seq
    // / wires); the registered frame of piece i is i % depth.
    uint64_t sendsPosted = 0;      // SENDs posted (data and control)
    uint64_t sendsDone = 0;        // their completions
    uint64_t dataSent = 0;         // pieces given out on this wire
    uint64_t dataAcked = 0;        // the peer holds every piece below it
    uint64_t resendNext = 0;       // the next piece to send again
    uint64_t probedAt = 0;         // dataSent when the last probe went
    bool starved = false;          // data waits for a credit
    uint8_t uncreditedSent = 0;    // uncredited frames posted (wrapping)
    uint8_t uncreditedEchoed = 0;  // ... the peer says it received
    // The same, from the peer's word alone (the budget above also comes
    // back with time): what a frame sent beyond it risks.
    uint8_t uncreditedConfirmed = 0;
    int64_t spareFullSinceNs = 0;  // when the spare budget ran out
    uint64_t transmissions = 0;    // SENDs that spent a credit
    uint64_t creditsGranted = 0;   // from the peer's headers
    uint64_t controlPosted = 0;    // control frames posted / completed
    uint64_t controlDone = 0;
    std::vector<uint8_t> inFlight;  // per data frame: SENDs not completed
    // Receiving.
    uint64_t nextTransmission = 0;   // the transmission expected next
    uint8_t uncreditedReceived = 0;  // uncredited frames received
    uint64_t dataReceived = 0;       // pieces received in order
    uint64_t credits = 0;            // granted to the peer (cumulative)
    uint64_t creditsTold = 0;        // the last count sent to it
    // Of those, the ones for data (consumed, dropped or lost): only these
    // make a credit-returning frame due, so two idle ends never trade
    // such frames forever.
    uint64_t dataCredits = 0;
    uint64_t dataCreditsTold = 0;
    uint64_t askedResendAt = UINT64_MAX;  // dataReceived when it was asked
    bool resendWanted = false;            // a gap: ask for it again
    uint64_t windowReceived = 0;          // transmissions in the loss window
    uint64_t windowLost = 0;
    bool peerSaidFarewell = false;  // no data comes after it on this wire
    // Given up (a cable lost): nothing is sent, posted or polled on it
    // again. Its pieces from moveNext to dataSent go over the wires left.
    bool lost = false;
    uint64_t moveNext = 0;
    // Frames that came on it (credited and not) at the last clock look,
    // when that count last moved, and since when it has had something the
    // peer must answer (needsProbe; 0: nothing): a wire that answers
    // nothing for a second while another answers is given up.
    uint64_t heardMark = 0;
    int64_t heardNs = 0;
    int64_t waitingNs = 0;
  };
  struct Arrived {
    bool present = false;
    bool stored = false;  // copied out of its frame (after a loss)
    uint32_t wire = 0;
    uint32_t slot = 0;
    uint32_t bytes = 0;
  };

  // rdma_connection.cpp: the data path.
  std::byte* sendFrame(uint32_t wire, uint64_t index);
  std::byte* recvFrame(uint32_t wire, uint32_t slot);
  uint64_t creditsLeft(uint32_t wire) const;
  bool sendRoom(uint32_t wire, bool control) const;
  void postData(uint32_t wire, uint64_t piece);
  enum class Credit { None, Control, Data };
  void postReceive(uint32_t wire, uint32_t slot, Credit credit);
  // A credited frame's transmission number: false for a duplicate (its
  // receive reposted), after counting the transmissions lost before it.
  bool takeTransmission(uint32_t wire, uint32_t slot, const FrameHeader& h);
  void handleReceive(uint32_t wire, const Completion& c);
  void handleData(uint32_t wire, uint32_t slot, const FrameHeader& h);
  void handleCompletion(uint32_t wire, const Completion& c);
  [[noreturn]] void fail(uint32_t wire, const std::string& what) const;
  // rdma_failover.cpp: a lost wire.
  // The wire piece `seq` goes on: seq % wires while none is lost, else
  // the wires left in turn.
  uint32_t wireFor(uint64_t seq) const;
  // Gives `wire` up, saying why (fails, naming it, when it is the last).
  void loseWire(uint32_t wire, const std::string& why);
  // Asks each wire's port (a pulled cable on UC is silent otherwise): a
  // port down is noted in portsDown_, taken up by progress(); fails at
  // once, naming the cable, when no wire would be left.
  void checkPorts() const;
  // At each clock look: a wire with something to answer that has carried
  // nothing back for kSilentNs while another wire answers is given up
  // (a cable up at both ends that loses every frame). Probes the other
  // wires meanwhile, so that a live peer's answer shows.
  void watchSilence(int64_t now);
  // Pieces of lost wires still to send again, and sending them.
  bool movesPending() const;
  void movePieces();
  // A frame of `wire` free for the next data piece, its credit included.
  bool dataRoom(uint32_t wire) const;
  // From the first loss on: every piece within a window copied out of its
  // receive frame (the window and arrived_ grow at each loss).
  void storeMore();
  void storeArrived(uint64_t seq, Arrived& a);
  const std::byte* payloadOf(uint64_t seq, const Arrived& a) const;
  // rdma_standby.cpp. Every wire lost (here, or the peer said so on the
  // standby): the pieces the peer had not acknowledged, oldest first, then
  // every new one go over the standby; the peer is told first, on it.
  void enterStandby(const std::string& why);
  // Sends what is due on the standby (the notice, the pieces to move);
  // true when all of it is out.
  bool sendOnStandby();
  // The standby's next record head (StandbyRecord), read whole; false
  // while it has not all come.
  bool readStandbyHead();
  // The piece nextRecvSeq_ from the standby (records of pieces read
  // already dropped), or empty.
  std::span<const std::byte> peekStandby();
  void releaseStandby(size_t bytes);
  // Before the move, at clock looks: a notice on the standby means the
  // peer moved (its cable end went down, or it heard silence).
  void watchStandby(int64_t now);
  [[noreturn]] void failStandby(const std::string& what) const;
  [[noreturn]] void failSlotTooSmall(size_t slotBytes) const;
  // A standby to move to (kept, and not broken while RDMA carried).
  bool hasStandby() const { return standby_ && !standbyGone_; }
  // rdma_control.cpp: credits, acknowledgements, probes, resends.
  void writeCounts(uint32_t wire, FrameHeader& h);
  void readCounts(uint32_t wire, const FrameHeader& h);
  void catchUp(uint32_t wire, uint32_t before);
  void applyResendRequests(const FrameHeader& h);
  // 1 on the wire whose frame is acquired and not committed: the place in
  // the queue and the credit that commit counts on.
  uint64_t reservedFor(uint32_t wire) const;
  bool postControl(uint32_t wire, uint8_t flags, const std::string& text);
  void handleControl(uint32_t wire, uint32_t slot, const FrameHeader& h);
  void sendControlFrames();
  void resend(uint32_t wire);
  void lookAtClock();
  // Pieces unacknowledged on the wire, or data or a resend that waits for
  // a credit: nothing else may come back if what the peer would answer
  // was lost. Never after the peer's farewell on the wire.
  bool needsProbe(uint32_t wire) const;
  void probeIfSilent(int64_t now);
  void reportLosses(int64_t now);

  int rank_;
  int peerRank_;
  std::vector<Wire> wires_;
  std::vector<WireState> state_;
  FrameShape shape_;
  std::string link_;
  std::shared_ptr<ConnectionSet> set_;
  uint64_t nextSendSeq_ = 0;
  bool acquired_ = false;
  uint32_t acquiredWire_ = 0;  // the wire of the frame acquired
  uint64_t nextRecvSeq_ = 0;   // the piece peekRecv serves
  uint32_t recvOffset_ = 0;    // consumed bytes of that piece
  // By sequence % its size: wires * depth, and that much more at each
  // loss (storeMore).
  std::vector<Arrived> arrived_;
  // Lost wires: ports seen down (bit per wire), the wires left, this end's
  // lost bits as every header carries them; the copies of pieces taken out
  // of their frames, one per arrived_ entry; and the window within which a
  // piece is copied out (what the wires could hold before the loss).
  mutable uint32_t portsDown_ = 0;
  std::vector<uint32_t> left_;
  uint8_t lostBits_ = 0;
  bool storing_ = false;
  std::vector<std::byte> stored_;
  std::vector<std::byte> retired_;  // the copies the caller may still read
  uint64_t storeWindow_ = 0;
  int64_t portsCheckedNs_ = 0;
  int64_t othersProbedNs_ = 0;
  uint64_t bytesSent_ = 0;
  mutable bool broken_ = false;  // set by fail(), also from peerAlive()
  mutable std::string failure_;  // what fail() said
  bool saidFarewell_ = false;
  bool answerDue_ = false;   // the peer probed: answer with the counts
  uint32_t answerWire_ = 0;  // on the wire the probe came
  uint32_t pollsSinceClock_ = 0;
  int64_t lastAckNs_ = 0;  // when the acknowledgements last moved
  int64_t lastProbeNs_ = 0;
  int64_t probeAfterNs_ = 0;   // grows while probes go unanswered
  int64_t lossWindowNs_ = 0;   // when the loss window began
  int64_t lossWarnedNs_ = 0;   // the last warning about a lossy wire
  uint64_t ackedTotal_ = 0;    // pieces acknowledged, all wires
  uint64_t grantedTotal_ = 0;  // credits granted by the peer, all wires

  uint64_t ackedAtLook_ = 0;  // ackedTotal_ when the clock was last read
  // The standby (TCP to the same peer, or null) and the move to it.
  struct Moving {
    uint64_t seq = 0;
    uint32_t wire = 0;
    uint64_t index = 0;  // the piece's place on its wire (its send frame)
  };
  std::unique_ptr<Connection> standby_;
  std::string standbyLink_;     // "tcp ... (standby of rdma ...)"
  bool onStandby_ = false;      // every wire lost: pieces go over standby_
  bool standbyGone_ = false;    // it broke before the move: never used
  bool noticeDue_ = false;      // the peer is still to be told, on it
  std::vector<Moving> moving_;  // pieces to send on it, by seq
  size_t movingNext_ = 0;
  uint32_t movingOffset_ = 0;          // bytes of moving_[movingNext_] sent
  bool standbyAcquired_ = false;       // a new piece's space acquired on it
  std::byte* standbySpace_ = nullptr;  // ... where its record head goes
  StandbyRecord head_{};               // the record being read
  uint32_t headHave_ = 0;              // ... bytes of its head read
  bool haveHead_ = false;              // ... head whole; headLeft_ bytes follow
  uint32_t headLeft_ = 0;
  int64_t standbyCheckedNs_ = 0;
  std::string peerFarewell_;  // the reason the peer gave, once in
};

}  // namespace mcl::transport::rdma
