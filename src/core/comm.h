// The communicator: who the ranks are, the transport connections to each,
// the execution state, and the sticky error. Built by comm_init.cpp; reached
// from the C API only through comm_registry.h, which rejects stale handles.
#pragma once

#include <mcl/mcl.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "algorithms/context.h"
#include "algorithms/step.h"
#include "core/bootstrap_protocol.h"
#include "core/settings.h"
#include "transports/shm/shm_device.h"

struct mclComm {
  int rank = 0;
  int nranks = 1;
  uint64_t commId = 0;
  mcl::CommSettings settings;
  std::vector<mcl::PeerInfo> peers;
  std::unique_ptr<mcl::transport::shm::ShmDevice> shm;
  std::vector<std::unique_ptr<mcl::transport::Connection>> connections;
  mcl::AlgoContext context;

  std::atomic<bool> aborted{false};
  std::atomic<bool> finalized{false};
  std::atomic<int> activeCalls{0};  // API calls inside right now
  std::atomic<int> queuedOps{0};    // operations waiting on streams

  // Serialises execution (a stream thread and the caller may share a comm).
  std::mutex execMutex;
  std::vector<mcl::Step> steps;  // reused so a call allocates nothing
  uint64_t nextSequence = 0;

  // Which communicator this is, in messages: "comm <name> rank r/n".
  std::string label() const;

  // The sticky error: set once, by the first failure that is not
  // mclInvalidArgument.
  void fail(mclResult_t code, const std::string& message);
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
  std::atomic<int> sticky_{mclSuccess};
  mutable std::mutex stickyMutex_;
  std::string stickyMessage_;
};

namespace mcl {

// Collective: joins the rendezvous and connects to every peer.
std::unique_ptr<mclComm> initComm(int nranks, const mclUniqueId& id, int rank,
                                  const mclConfig_t* config);

}  // namespace mcl
