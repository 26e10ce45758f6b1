// The communicator: who the ranks are, the transport connections to each,
// the execution state, and the sticky error. Built by comm_init.cpp; reached
// from the C API only through handle_registry.h, which rejects stale
// handles.
#pragma once

#include <mcl/mcl.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "algorithms/context.h"
#include "algorithms/step.h"
#include "core/bootstrap/bootstrap_protocol.h"
#include "core/comm/comm_registrations.h"
#include "core/comm/custom_ops.h"
#include "core/comm/peer_segments.h"
#include "core/comm/transport_choice.h"
#include "core/liveness/peer_watch.h"
#include "core/params/settings.h"
#include "topology/cluster.h"
#include "transports/device.h"

struct mclComm {
  int rank = 0;
  int nranks = 1;
  uint64_t commId = 0;
  // The unique id's secret: splits derive theirs from it (never sent).
  mcl::Secret secret{};
  uint64_t splitsStarted = 0;  // mclCommSplit calls, the same on every rank
  mcl::CommSettings settings;
  std::vector<mcl::PeerInfo> peers;
  mcl::topology::Cluster cluster;  // hosts, cables, shape, paths
  // The transports tried, in priority order (transport_registry.h); only
  // those some pair may use were opened. Devices before connections:
  // connections go first when the comm dies.
  mcl::DeviceList devices;
  mcl::TransportChoice transports;  // which device joins each pair
  uint64_t peerBufferLimit = 0;     // MCL_PEER_BUFFER_LIMIT, read at init
  // The largest staging copy one batch needed (bytes), for the footprint.
  std::atomic<uint64_t> stagingPeakBytes{0};
  // The Mac of the emulated fabric this process plays: its rank in the
  // first communicator it joined, kept by mclCommSplit (a process does not
  // change Macs when it joins a smaller communicator).
  int emuMac = 0;
  std::unique_ptr<mcl::transport::Waker> combinedWaker;
  // The side channel to every peer (null for one rank, or
  // MCL_PEER_TIMEOUT=0); context.health points here.
  std::unique_ptr<mcl::PeerWatch> peerWatch;
  std::vector<std::unique_ptr<mcl::transport::Connection>> connections;
  std::vector<std::unique_ptr<mcl::transport::Connection>> p2pConnections;
  // Peers' mclMemAlloc memory, when every rank is on this host over shared
  // memory (context.sharedBuffers points here then).
  std::unique_ptr<mcl::PeerSegments> peerSegments;
  mcl::CommRegistrations registrations;  // mclCommRegister's
  mcl::AlgoContext context;              // what algorithms read
  mcl::CallScratch callScratch;  // what a batch's steps write (context.call)
  mcl::CustomOps customOps;      // mclRedOpCreatePreMulSum's ops

  std::atomic<bool> aborted{false};
  std::atomic<bool> finalized{false};
  // Non-blocking mclCommSplits of this communicator under way (or waiting
  // for mclGroupEnd): it takes no other call until they end.
  std::atomic<int> splitsUnderWay{0};
  // A non-blocking mclCommFinalize returned mclInProgress: queued
  // operations are still draining.
  std::atomic<bool> finalizing{false};
  std::atomic<bool> closing{false};  // a destroy or abort owns the object
  std::atomic<int> activeCalls{0};   // API calls inside right now
  std::atomic<int> queuedOps{0};     // operations waiting on streams

  // Issue order: each batch takes a ticket when the API accepts it and runs
  // when its ticket comes up, so a stream's operations and the caller's run
  // in the order they were issued, on every rank.
  uint64_t takeTicket();
  // Waits (checking for abort) until ticket is served.
  void waitTurn(uint64_t ticket);
  void finishTurn();
  // A ticket that will never run (its batch failed before its turn).
  void skipTurn(uint64_t ticket);

  std::vector<mcl::Step> steps;  // reused so a call allocates nothing
  uint64_t nextSequence = 0;
  uint64_t checkedCalls = 0;  // collectives compared under MCL_CHECK

  // Which communicator this is, in messages: "comm <name> rank r/n".
  // Built once (rank, size and name never change after init): every call
  // passes it to code that names the communicator only when it fails.
  const std::string& label() const;

  // The sticky error: set once, by the first failure that is not
  // mclInvalidArgument. True when this call set it.
  bool fail(mclResult_t code, const std::string& message);
  // Tells every peer why this rank stops (Connection::sayFarewell), so one
  // waiting on it fails at once naming the first failure. Only by the
  // thread that holds the communicator's turn, or when no call is inside.
  // finished: this rank did all it was asked (it destroys the
  // communicator), so peers weigh the news after what is still on its way.
  void tellPeers(const std::string& reason, bool finished = false) noexcept;
  // Transport::Device::beginCalls / endCalls on every device: around a
  // turn, and around tellPeers.
  void useDevices(bool begin) noexcept;
  // fail(), then tellPeers() when this failure is the first; with the
  // turn held.
  void failAndTellPeers(mclResult_t code, const std::string& message);
  mclResult_t stickyError() const {
    return static_cast<mclResult_t>(sticky_.load(std::memory_order_acquire));
  }
  std::string stickyMessage() const;
  // For new calls: throws the sticky error, or mclInvalidUsage after abort
  // or finalize.
  void checkUsable() const;
  // For operations already accepted (queued on a stream before finalize):
  // throws the sticky error, or on abort.
  void checkRunnable() const;

 private:
  // Passes serving_ over skipped tickets that are next; with orderMutex_.
  void drainSkippedLocked();

  // Turns: a call whose turn it is, with nobody waiting and nothing
  // skipped, takes and passes its turn on atomics alone; the mutex and the
  // condition variable serve those who wait and the skipped tickets. The
  // counters are read and written in sequentially consistent order, so a
  // waiter or a skip that comes in while a turn is passed on is either seen
  // by the one passing it or sees it (see comm.cpp).
  std::mutex orderMutex_;
  std::condition_variable turnChanged_;
  std::atomic<uint64_t> nextTicket_{0};
  std::atomic<uint64_t> serving_{0};
  std::atomic<int> waiters_{0};
  std::atomic<size_t> skippedCount_{0};  // skipped_.size()
  std::set<uint64_t> skipped_;

  std::atomic<int> sticky_{mclSuccess};
  mutable std::mutex stickyMutex_;
  std::string stickyMessage_;
  mutable std::string label_;
};
