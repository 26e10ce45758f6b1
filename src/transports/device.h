// What core sees of a transport: a Device, one per transport per rank and
// communicator. Core keeps them in one registry in priority order
// (core/registry/transport_registry.cpp) and one function asks them, pair by
// pair, which one joins two ranks (core/comm/transport_choice.cpp). A Device
// goes through init in phases that every rank runs alike:
//
//   reaches(a, b)      from where the ranks run, before anything is opened:
//                      could this transport join them? (Yes, Maybe, No)
//   open()             take what the rank offers: a segment, listening
//                      sockets, the RDMA provider
//   details()          bytes for the other ranks, in the first all-gather
//   learn(all, ...)    every rank's details (outside input: checked) and the
//                      cluster; the settings every rank must share agree
//   canConnect(a, b)   the final answer, alike on every rank
//   connect(peers)     this rank's peers over this transport, in time
//   afterBarrier()     init is over on every rank: drop what it needed
//   connection(), waker()
//
// A pair's transport is the first Device in priority order whose
// canConnect says Yes; a rank's connection to itself is the first that
// reaches (a, a).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/auth.h"
#include "base/param_source.h"
#include "platform/socket.h"
#include "topology/cluster.h"
#include "transports/transport.h"

namespace mcl::transport {

// What a link costs, for the tuner's model: from fastest to slowest.
enum class LinkKind { SharedMemory, EmulatedRdma, Rdma, Socket };
// The tuner's name of the kind: "shm", "emulated rdma", "rdma", "tcp".
const char* linkKindName(LinkKind kind);

// Every transport has these two channels to each peer: collectives and
// point-to-point traffic never share one, so neither waits on the other.
enum class Channel : uint32_t { Collective = 0, PointToPoint = 1 };

// Where a rank runs, from the rendezvous.
struct RankPlace {
  std::string hostId;  // equal for ranks of one host
  std::string hostName;
  uint32_t pid = 0;
  // Free bytes for shared memory where it runs (/dev/shm), seen before any
  // rank took some for this communicator; UINT64_MAX where unbounded.
  uint64_t shmFreeBytes = UINT64_MAX;
};

// What core gives a Device when it makes one, before the rendezvous: a
// Device's constructor reads and checks its settings and takes nothing
// else, so a bad setting fails init before any peer waits on this rank.
struct DeviceInit {
  int rank = 0;
  int nranks = 1;
  Secret secret{};
  std::string label;  // "comm <name> rank r/n", for messages
  // The Mac this process plays on the emulated RDMA fabric (a process
  // keeps its Mac when it joins a smaller communicator).
  int emuMac = 0;
  const ParamSource* params = nullptr;
};

struct Verdict {
  enum Answer { No, Maybe, Yes };
  // Why a No: what init does with the pair next depends on it.
  enum Decline {
    NotMine,  // not this transport's kind of pair (one host, for RDMA):
              // another transport joins it, even under MCL_TRANSPORT=<this>
    NoPath,   // this transport's kind, but nothing of it joins the two (no
              // cable): under auto another joins them quietly; under
              // MCL_TRANSPORT=<this> init fails
    Broken,   // it should join them and cannot (a port down, no GID, the
              // library missing): under auto another joins them and every
              // rank warns; under MCL_TRANSPORT=<this> init fails
  };
  Answer answer = No;
  std::string why;  // for No (and Maybe): what is missing, for messages
  Decline decline = NotMine;
  static Verdict yes() { return {Yes, {}, NotMine}; }
  static Verdict maybe(std::string why) {
    return {Maybe, std::move(why), NotMine};
  }
  static Verdict no(std::string why) { return {No, std::move(why), NotMine}; }
  static Verdict noPath(std::string why) {
    return {No, std::move(why), NoPath};
  }
  static Verdict broken(std::string why) {
    return {No, std::move(why), Broken};
  }
};

// A round of init every rank runs alike (core's rendezvous): every rank's
// bytes, by rank.
class InitExchange {
 public:
  virtual ~InitExchange() = default;
  virtual std::vector<std::vector<uint8_t>> allGather(
      const std::vector<uint8_t>& mine) = 0;
  // Waits of connect() that are not rounds of it (a peer's connection)
  // call this between slices: it throws when another rank's init failed,
  // so this one stops with that reason instead of waiting out the timeout.
  virtual void throwIfAbandoned() {}
};

// The buffers a transport holds for its peers: bytesPerWire on each wire
// (a TCP link's sockets, an RDMA cable, a shared-memory ring pair).
struct BufferUse {
  uint64_t bytesPerWire = 0;
  const char* settings = "";  // which settings size it, for messages
  size_t wires = 0;           // wires to all peers, once connected
  size_t mostWiresToOnePeer = 1;
};

// A link this rank's connections ride to a peer, for the watch that
// notices a cable going down (core/liveness/cable_watch.h).
struct WatchedLink {
  std::string kind;  // "cable", "LAN", "routed"
  std::string localInterface;
  std::string localAddress;  // numeric, as readInterfaceLinks() writes it
  int prefixLength = 0;
  std::string remoteInterface;
  std::string remoteAddress;
  // Set by the cable watch while it calls the link down, read by the
  // transport's connections over it (which then carry on over the others);
  // wake, called after each change, rouses a wait asleep on the transport
  // (it lives as long as the device, which outlives the watch).
  std::shared_ptr<std::atomic<bool>> downSignal;
  std::function<void()> wake;
};

// What carries this rank's traffic to one peer: its links, used together,
// and the path init would have chosen without them ("" when none: no LAN,
// no route), which a pair that lost its last link could still take.
struct PeerLinks {
  int peer = -1;
  std::vector<WatchedLink> links;
  std::string fallback;
  // Where the connections move to it: this rank's address on it and the
  // peer's ("10.78.0.1", "10.78.0.2"); a side channel between the same two
  // speaks for it.
  std::string fallbackAddress;
  std::string fallbackPeerAddress;
  // The transport's connections move there by themselves when the last
  // link is lost (a standby over it was made at init).
  bool movesToFallback = false;
  // The pair's links that init left out (they carried nothing): counted,
  // not watched.
  std::vector<WatchedLink> leftOut;
  // The links of a standby (TCP beside an RDMA pair): watched so that its
  // connections move off a cable that went down, but the pair's own
  // transport, not these, says whether a path is left.
  bool standbyOnly = false;
};

class Device {
 public:
  virtual ~Device() = default;

  virtual const char* name() const = 0;  // "shm", MCL_TRANSPORT's word
  virtual LinkKind linkKind() const = 0;

  // From the rendezvous, before reaches(): the communicator's id and where
  // every rank runs.
  void joined(uint64_t commId, std::vector<RankPlace> places) {
    commId_ = commId;
    places_ = std::move(places);
  }

  virtual Verdict reaches(int a, int b) const = 0;
  // candidates: the ranks (this one included) this device may join this
  // rank to, from every device's reaches().
  virtual void open(const std::vector<int>& candidates,
                    platform::Deadline deadline) = 0;
  virtual std::vector<uint8_t> details() const = 0;
  // all[r]: rank r's details() (every rank that opened this device). Throws
  // mclRemoteError for bytes that are not details, mclInvalidUsage naming
  // the rank for settings that differ from this rank's.
  virtual void learn(const std::vector<std::vector<uint8_t>>& all,
                     const topology::Cluster& cluster) = 0;
  virtual Verdict canConnect(int a, int b) const { return reaches(a, b); }
  // After learn(), alike on every rank: whether this transport can stand
  // by for a pair another one joins (TCP beside RDMA), connected at init
  // without a doubt (a path both ends' details show). Default: no.
  virtual bool canStandBy(int a, int b) const {
    (void)a;
    (void)b;
    return false;
  }
  // For the topology: what carries the pair (a < b) over this transport.
  virtual void describePath(int a, int b, topology::RankPath& path) const {
    (void)a;
    (void)b;
    (void)path;
  }

  // Every rank calls it for every device that joins some pair of the
  // communicator (peers may be empty), so rounds of `exchange` match.
  virtual void connect(const std::vector<int>& peers, InitExchange& exchange,
                       platform::Deadline deadline) = 0;
  virtual void afterBarrier() {}
  virtual std::unique_ptr<Connection> connection(int peer, Channel channel) = 0;
  virtual Waker& waker() = 0;

  // The fewest bytes any rank can hold in flight toward one peer (ring
  // rounds are sized from it), known after learn().
  virtual uint64_t receiveCapacity() const = 0;
  virtual BufferUse bufferUse() const = 0;
  // The fewest wires between two ranks joined by this device (the tuner
  // splits large transfers over them), known after connect().
  virtual int fewestWires() const { return 1; }
  // Around every stretch in which the communicator's own thread uses its
  // connections (a turn; the farewells of a failure or a destroy): a
  // transport whose connections other threads may service (RDMA, from the
  // naps of other communicators) keeps them off meanwhile. Nested calls
  // are allowed.
  virtual void beginCalls() {}
  virtual void endCalls() {}
  // What the transport counted on this communicator, by name ("lost":
  // frames RDMA lost and sent again), for the topology dump; empty for a
  // transport that counts nothing.
  virtual std::vector<std::pair<std::string, uint64_t>> counters() const {
    return {};
  }
  // The network links this rank's connections ride, per peer, known after
  // connect(); empty for a transport without any (shared memory).
  virtual std::vector<PeerLinks> watchedLinks() const { return {}; }

 protected:
  uint64_t commId_ = 0;
  std::vector<RankPlace> places_;
};

}  // namespace mcl::transport
