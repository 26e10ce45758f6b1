// The interface algorithms see: a Connection per peer that moves bytes in
// pieces without blocking, and a Waker to sleep until a peer acts. Each
// transport (shm, tcp, rdma) implements both; core builds them through the
// transport's Device (device.h). Bytes sent on a
// connection arrive in order; the sender's pieces may be consumed in smaller
// parts by the receiver.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace mcl::transport {

// What a communicator knows of its peers' processes beyond their links
// (core's side channel, core/liveness/peer_watch.h): UC RDMA says nothing when
// a peer dies, and no link says anything when a process stops.
class PeerHealth {
 public:
  virtual ~PeerHealth() = default;
  // Why `peer` will not answer ("rank 2's process died ..."), or "" while
  // it may. Thread-safe.
  virtual std::string problemWith(int peer) const = 0;
  // The words of `peer`'s farewell once it gave up, or "". Thread-safe.
  virtual std::string farewellOf(int peer) const = 0;
  // Tells every peer why this rank stops, beside the farewell each link
  // carries (an RDMA link without a spare credit carries none).
  // Thread-safe; best effort.
  virtual void sayFarewell(const std::string& reason) = 0;
  // What a wait on `peer` that timed out should also say: the links to it
  // that are down, and for how long ("; ..."), or "". Thread-safe.
  virtual std::string linkNote(int peer) const {
    (void)peer;
    return "";
  }
};

class Connection {
 public:
  virtual ~Connection() = default;

  // Space for the next piece to the peer, at most maxBytes (> 0), or empty
  // when the peer has no room yet. The caller writes, then commits. The
  // space is a multiple of 64 bytes unless maxBytes is smaller, so pieces
  // always hold whole elements of every type.
  virtual std::span<std::byte> acquireSend(size_t maxBytes) = 0;
  // Publishes bytes (> 0) of the acquired space to the peer.
  virtual void commitSend(size_t bytes) = 0;

  // The received bytes not yet consumed (part of one piece), or empty.
  virtual std::span<const std::byte> peekRecv() = 0;
  // Consumes the first bytes of what peekRecv returned.
  virtual void releaseRecv(size_t bytes) = 0;

  // False once the peer is known to be gone (process exited) or said
  // farewell.
  virtual bool peerAlive() const = 0;
  // False once the peer will take nothing more that this side sends: gone,
  // or said farewell. It may differ from peerAlive(), which can stay true
  // while a piece the peer sent before its farewell is still unread here.
  virtual bool peerAcceptsSends() const { return peerAlive(); }
  // Why the peer is gone, for messages: the reason it gave in its farewell,
  // else what the transport can tell ("its process exited").
  virtual std::string peerGoneReason() const { return "its process exited"; }
  // Best effort and never blocking: tells the peer why this rank stops
  // using the connection (its communicator failed, was aborted or
  // destroyed), so a peer still waiting on it fails at once with the first
  // failure's reason instead of "gone" or a timeout. Transports that cannot
  // say it do nothing.
  virtual void sayFarewell(const std::string& reason) { (void)reason; }
  // Before a normal close (the communicator destroyed after its operations
  // completed): for transports that can lose a frame and send it again
  // (RDMA over UC), waits a bounded time until the peer holds everything
  // sent to it. Others do nothing.
  virtual void finish() {}

  // Sends straight from the caller's memory (no copy into the transport's
  // buffer), for transports that gain from it: up to `bytes`, returning how
  // many were taken (0 when there is no room). The memory must stay valid
  // and unchanged until drained(). The default takes nothing; callers fall
  // back to acquireSend.
  virtual size_t sendFrom(const std::byte* data, size_t bytes) {
    (void)data;
    (void)bytes;
    return 0;
  }
  virtual bool sendsFromCallerMemory() const { return false; }
  // Receives straight into the caller's memory, for transports that copy
  // from a socket anyway: the next `bytes` bytes of the stream (from where
  // the reader stands now) belong at dst, and whole pieces that fall inside
  // them are read there instead of into the transport's buffer; peekRecv
  // then returns spans of dst itself. Only the one reader of the connection
  // posts, at the start of its bytes. withdrawRecv ends the post before the
  // caller's call returns; a piece half read into dst by then (the call
  // failed) breaks the connection, as its bytes are lost. Others ignore both.
  virtual void postRecv(std::byte* dst, size_t bytes) {
    (void)dst;
    (void)bytes;
  }
  virtual void withdrawRecv() {}

  // Moves bytes that were committed but not yet handed to the peer (a
  // network transport's send queue), without blocking. An operation is
  // complete only when every connection it sent on is drained.
  virtual void progress() {}
  virtual bool drained() const { return true; }
  // The operation is over and drained: whatever the connection may still
  // have to send again from the caller's memory (a network transport that
  // carries on over another link when one is lost) is copied now, since
  // the caller may change that memory once the call returns.
  virtual void releaseCallerMemory() {}
  // Called about every millisecond while the rank waits on other
  // connections: one that no step waits on may still hold pieces its peer
  // has not received, on a cable that went down meanwhile, and the peer
  // waits for them. A network transport that carries on over another link
  // looks at its links here, and sends again what the lost one carried.
  virtual void tend() {}
  // Bytes handed to the peer so far (for network transports): a flush that
  // moves bytes is progress, not idling toward the timeout.
  virtual uint64_t bytesHandedOver() const { return 0; }
  // For transports whose send space is memory another core reads next
  // (shared memory): whether a piece of `bytes` written there should go
  // with non-temporal stores, and what the write cost (see
  // shm/store_choice.h). `fold`: the piece is computed (a reduction), not
  // copied; the two cost differently. Others never ask for them.
  virtual bool choosesSlotStores(size_t bytes) const {
    (void)bytes;
    return false;
  }
  virtual bool streamNextSlot(bool fold) {
    (void)fold;
    return false;
  }
  virtual void recordSlotStore(bool fold, bool streamed, size_t bytes,
                               std::chrono::nanoseconds took) {
    (void)fold;
    (void)streamed;
    (void)bytes;
    (void)took;
  }
  // A connection of another transport to the same peer and channel, made
  // at init for this one to carry on over when it loses its last link
  // (RDMA's last cable: TCP). False: this transport keeps none (the
  // standby is dropped with the call).
  virtual bool keepStandby(std::unique_ptr<Connection> standby) {
    (void)standby;
    return false;
  }
  // Which link this is, for messages ("shm").
  virtual const char* linkName() const = 0;
  // Why no byte can move on it now though its peer lives (every link
  // silent), "" while some may; asked only while an operation waits on it.
  virtual std::string linkTrouble() { return ""; }
};

// A rank with nothing to do sleeps through its Waker until a peer commits or
// releases bytes that concern it. arm() must come before the last progress
// check so a peer acting in between is not missed.
class Waker {
 public:
  virtual ~Waker() = default;
  virtual uint32_t arm() = 0;
  virtual void sleep(uint32_t token, int64_t timeoutNs) = 0;
  virtual void disarm() = 0;
  // Wakes the sleeper from another thread (abort).
  virtual void interrupt() = 0;
  // A waker that cannot be woken by its peers and naps instead (RDMA polls
  // its completion queues): the longest nap in ns. 0: it sleeps until a
  // peer wakes it or the timeout passes.
  virtual int64_t napNs() const { return 0; }
};

}  // namespace mcl::transport
