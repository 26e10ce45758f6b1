// Communicator lifetime: init, finalize, destroy, abort, and queries.
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/log.h"
#include "core/api/api_guard.h"
#include "core/bootstrap/bootstrap_root.h"
#include "core/bootstrap/job_secret_file.h"
#include "core/bootstrap/launch_env.h"
#include "core/bootstrap/new_unique_id.h"
#include "core/bootstrap/rendezvous_addresses.h"
#include "core/comm/comm.h"
#include "core/comm/comm_memory.h"
#include "core/comm/handle_registry.h"
#include "core/comm/pending_init.h"
#include "core/init/comm_init.h"
#include "core/init/comm_split.h"
#include "core/liveness/cable_watch.h"
#include "core/liveness/peer_watch.h"
#include "core/params/settings.h"
#include "core/run/group.h"
#include "topology/cluster_json.h"

namespace {

using Clock = std::chrono::steady_clock;

// Waits until the communicator's queued operations are done. Each is bounded
// by the timeout without progress, so the wait is too: it fails only when
// the queue stops shrinking for longer than that.
bool drainQueued(const mclComm& comm) {
  auto bound = std::chrono::seconds(comm.settings.timeoutSeconds + 5);
  int last = comm.queuedOps.load();
  auto deadline = Clock::now() + bound;
  while (true) {
    int now = comm.queuedOps.load();
    if (now == 0) return true;
    if (now < last) {
      last = now;
      deadline = Clock::now() + bound;
    }
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// A handle whose init has not built its communicator yet: the init is
// stopped (init_cancel.h) and waited for; a communicator it built all the
// same is destroyed, its peers told. False for a live communicator's.
bool closePending(mclComm_t handle) {
  std::shared_ptr<mcl::PendingInit> init = mcl::pendingOf(handle);
  if (!init) return false;
  if (mcl::unregisterPending(handle) == nullptr)
    throw mcl::error(mclInvalidUsage,
                     "comm %p is already being destroyed by another thread",
                     static_cast<void*>(handle));
  init->cancel();
  init->waitEnded();
  return true;
}

// Destroy and abort: the first caller owns the object. An abort that
// arrives while a destroy drains only speeds it up (the destroy frees).
void closeComm(mclComm_t handle, bool abort) {
  if (closePending(handle)) return;
  mclComm* comm = nullptr;
  {
    mcl::CommRef ref(handle);
    comm = ref.get();
    if (abort) {
      comm->aborted.store(true);
      if (comm->context.waker != nullptr) comm->context.waker->interrupt();
    }
    if (comm->closing.exchange(true)) {
      if (abort) return;
      throw mcl::error(mclInvalidUsage,
                       "%s: the communicator is already being destroyed by "
                       "another thread",
                       comm->label().c_str());
    }
    comm->finalized.store(true);
    if (!drainQueued(*comm)) {
      comm->closing.store(false);
      throw mcl::error(mclTimeout,
                       "%s: queued operations stopped making progress; the "
                       "communicator is left alive (abort it)",
                       comm->label().c_str());
    }
  }
  mcl::unregisterComm(handle);
  // Calls that resolved the handle before it was removed are bounded by the
  // timeout (or end at once after an abort).
  auto deadline =
      Clock::now() + std::chrono::seconds(comm->settings.timeoutSeconds + 5);
  while (comm->activeCalls.load() > 0) {
    if (Clock::now() >= deadline)
      throw mcl::error(mclInternalError,
                       "%s: other threads are still inside calls on it; the "
                       "communicator is leaked rather than freed under them",
                       comm->label().c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Peers still waiting on this rank learn why it left (a failure already
  // told them).
  if (comm->stickyError() == mclSuccess)
    comm->tellPeers(comm->label() + (abort ? " aborted the communicator "
                                             "(mclCommAbort)"
                                           : " destroyed the communicator"),
                    !abort);
  delete comm;
}

// Init now on this thread, or later on a thread of its own: inside a group
// (at mclGroupEnd) or for a non-blocking config (at once; mclInProgress).
// Arguments and settings are checked here either way.
// makeId gives the unique id on the init's thread: it may wait (for a
// secret another rank makes) and a non-blocking init must not.
mclResult_t startInitWith(mclComm_t* comm, int nranks,
                          std::function<mclUniqueId(int timeoutSeconds)> makeId,
                          int rank, const mclConfig_t* config) {
  const mcl::CommSettings settings = mcl::loadSettings(config);
  auto build = [=] {
    return mcl::initComm(nranks, makeId(settings.timeoutSeconds), rank,
                         settings, -1);
  };
  if (settings.blocking && !mcl::inGroup()) {
    *comm = mcl::registerComm(build());
    return mclSuccess;
  }
  auto init = std::make_shared<mcl::PendingInit>(
      "mclCommInitRank, rank " + std::to_string(rank) + " of " +
          std::to_string(nranks),
      settings.blocking, build);
  *comm = mcl::registerPending(init);
  if (mcl::inGroup()) {
    mcl::groupDefer(init);
    return mclSuccess;
  }
  init->start();
  return mclInProgress;
}

mclResult_t startInit(mclComm_t* comm, int nranks, const mclUniqueId& id,
                      int rank, const mclConfig_t* config) {
  mcl::checkInitArguments(nranks, id, rank);
  return startInitWith(
      comm, nranks, [id](int) { return id; }, rank, config);
}

// mclCommSplit inside a group or non-blocking: the parent takes no other
// call until the split ends. A rank of no color gets no handle: its part
// (the parent's exchanges) runs all the same, on a detached thread.
mclResult_t startSplit(mclComm_t parentHandle, mclComm& parent, int color,
                       int key, mclComm_t* newcomm,
                       const mcl::SplitSettings& settings, bool blocking) {
  parent.splitsUnderWay.fetch_add(1);
  // The parent, held from the split's start to its end on the split's
  // thread (a destroy of it waits for the split).
  auto held = std::make_shared<std::unique_ptr<mcl::CommRef>>();
  auto build = [held, parentHandle, color, key, settings] {
    *held = std::make_unique<mcl::CommRef>(parentHandle);
    return mcl::splitComm(***held, color, key, settings);
  };
  auto init = std::make_shared<mcl::PendingInit>(
      "mclCommSplit of " + parent.label() + ", color " + std::to_string(color) +
          ", key " + std::to_string(key),
      blocking, build, color == MCL_SPLIT_NOCOLOR);
  init->atEnd([held] {
    if (*held) (**held)->splitsUnderWay.fetch_sub(1);
    held->reset();
  });
  if (color == MCL_SPLIT_NOCOLOR) {
    init->runDetached();
  } else {
    *newcomm = mcl::registerPending(init);
  }
  if (mcl::inGroup()) {
    mcl::groupDefer(init, [parentHandle] {
      try {
        mcl::CommRef ref(parentHandle);
        ref->splitsUnderWay.fetch_sub(1);
      } catch (const mcl::Error&) {
        // The parent is gone: nothing waits on its count.
      }
    });
    return mclSuccess;
  }
  init->start();
  return mclSuccess;  // as NCCL's: the parent says when it is done
}

// A failed init or split inside a group fails the group, as a failed
// operation does.
mclResult_t poisonGroupOnError(mclResult_t result) {
  if (result != mclSuccess && result != mclInProgress)
    mcl::groupPoison(result, mcl::lastError());
  return result;
}

// The most ranks mclCommInitAll runs as threads of one process.
constexpr int kMaxInitAllRanks = 64;

}  // namespace

using mcl::apiCall;
using mcl::error;

extern "C" {

mclResult_t mclCommInitRankConfig(mclComm_t* comm, int nranks,
                                  mclUniqueId commId, int rank,
                                  mclConfig_t* config) {
  return poisonGroupOnError(mcl::apiCallStatus(__func__, [&] {
    if (comm == nullptr) throw error(mclInvalidArgument, "comm is NULL");
    *comm = nullptr;
    return startInit(comm, nranks, commId, rank, config);
  }));
}

mclResult_t mclCommInitAll(mclComm_t* comms, int ndev, const int* devlist) {
  return apiCall(__func__, [&] {
    if (comms == nullptr) throw error(mclInvalidArgument, "comms is NULL");
    if (ndev < 1 || ndev > kMaxInitAllRanks)
      throw error(mclInvalidArgument,
                  "ndev %d must be between 1 and %d (ranks as threads of one "
                  "process; run more as processes, with mclCommInitRank)",
                  ndev, kMaxInitAllRanks);
    for (int i = 0; i < ndev; ++i) comms[i] = nullptr;
    for (int i = 0; devlist != nullptr && i < ndev; ++i) {
      if (devlist[i] < 0)
        throw error(mclInvalidArgument,
                    "devlist[%d] = %d: device numbers are >= 0 (mcl has no "
                    "devices; devlist may be NULL)",
                    i, devlist[i]);
      for (int j = 0; j < i; ++j)
        if (devlist[j] == devlist[i])
          throw error(mclInvalidArgument,
                      "devlist[%d] and devlist[%d] are both %d: each rank "
                      "needs a device of its own, as in NCCL (mcl has no "
                      "devices; devlist may be NULL)",
                      j, i, devlist[i]);
    }
    mcl::CommSettings settings = mcl::loadSettings(nullptr);
    settings.blocking = true;
    const mclUniqueId id = mcl::newUniqueId();
    std::vector<std::shared_ptr<mcl::PendingInit>> inits;
    for (int rank = 0; rank < ndev; ++rank)
      inits.push_back(std::make_shared<mcl::PendingInit>(
          "mclCommInitAll, rank " + std::to_string(rank) + " of " +
              std::to_string(ndev),
          true, [=] { return mcl::initComm(ndev, id, rank, settings, -1); }));
    for (auto& init : inits) init->start();
    for (auto& init : inits) init->waitEnded();
    for (auto& init : inits)
      if (init->state() == mcl::PendingInit::State::Failed)
        throw mcl::Error(init->code(), init->what() + ": " + init->message());
    for (int rank = 0; rank < ndev; ++rank)
      comms[rank] = mcl::registerComm(inits[size_t(rank)]->take());
  });
}

mclResult_t mclCommInitFromEnv(mclComm_t* comm, mclConfig_t* config) {
  return poisonGroupOnError(mcl::apiCallStatus(__func__, [&] {
    if (comm == nullptr) throw error(mclInvalidArgument, "comm is NULL");
    *comm = nullptr;
    mcl::LaunchEnv launch = mcl::readLaunchEnv();
    MCL_LOG(Info, mcl::kLogInit,
            "rank %d of %d from %s; rendezvous at %s from %s", launch.rank,
            launch.nranks, launch.rankSource.c_str(),
            launch.id.root.toString().c_str(), launch.rootSource.c_str());
    const bool sharedFile =
        launch.secretSource == mcl::SecretSource::SharedFile;
    if (launch.rankZeroListens && launch.rank == 0) {
      // A secret shared through a file reaches only this host's ranks: the
      // rendezvous listens on loopback alone, whatever name MCL_ROOT used.
      std::vector<mcl::platform::SocketAddress> binds = {launch.id.root};
      if (launch.rootIsName && !sharedFile) {
        binds = mcl::rendezvousAddresses();
        for (auto& a : binds) a = a.withPort(launch.id.root.port());
      }
      std::function<void()> whenClosed;
      if (sharedFile)
        whenClosed = [path = launch.secretFile] { mcl::removeJobSecret(path); };
      try {
        mcl::startRendezvousRoot(launch.id.secret, binds,
                                 mcl::timeoutFromEnvironment(), whenClosed);
      } catch (...) {
        if (whenClosed) whenClosed();
        throw;
      }
    }
    if (!sharedFile || launch.rank == 0)
      return startInit(comm, launch.nranks, mcl::encodeUniqueId(launch.id),
                       launch.rank, config);
    auto readSecret = [launch](int timeoutSeconds) {
      mcl::UniqueIdContents id = launch.id;
      id.secret = mcl::readJobSecret(
          launch.secretFile, launch.id.root,
          mcl::platform::Clock::now() + std::chrono::seconds(timeoutSeconds));
      return mcl::encodeUniqueId(id);
    };
    return startInitWith(comm, launch.nranks, readSecret, launch.rank, config);
  }));
}

mclResult_t mclCommInitRank(mclComm_t* comm, int nranks, mclUniqueId commId,
                            int rank) {
  return mclCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

mclResult_t mclCommSplit(mclComm_t comm, int color, int key, mclComm_t* newcomm,
                         mclConfig_t* config) {
  return poisonGroupOnError(mcl::apiCallStatus(__func__, [&] {
    if (newcomm == nullptr) throw error(mclInvalidArgument, "newcomm is NULL");
    *newcomm = nullptr;
    mcl::CommRef ref(comm);
    ref->checkUsable();
    const mcl::SplitSettings settings = mcl::splitSettings(*ref, config);
    // The new communicator's mode; with a config in error, the parent's
    // (the error is thrown once the ranks have agreed).
    const bool blocking =
        settings.error ? ref->settings.blocking : settings.settings.blocking;
    if (!blocking || mcl::inGroup())
      return startSplit(comm, *ref, color, key, newcomm, settings, blocking);
    std::unique_ptr<mclComm> child = mcl::splitComm(*ref, color, key, settings);
    if (child) *newcomm = mcl::registerComm(std::move(child));
    return mclSuccess;
  }));
}

mclResult_t mclCommFinalize(mclComm_t comm) {
  return mcl::apiCallStatus(__func__, [&] {
    mcl::CommRef ref(comm);
    ref->finalized.store(true);
    if (!ref->settings.blocking && ref->queuedOps.load() > 0) {
      ref->finalizing.store(true);
      return mclInProgress;
    }
    if (!drainQueued(*ref))
      throw error(mclTimeout, "%s: queued operations stopped making progress",
                  ref->label().c_str());
    if (ref->stickyError() != mclSuccess)
      throw mcl::Error(ref->stickyError(), ref->stickyMessage());
    return mclSuccess;
  });
}

mclResult_t mclCommDestroy(mclComm_t comm) {
  return apiCall(__func__, [&] { closeComm(comm, false); });
}

mclResult_t mclCommAbort(mclComm_t comm) {
  return apiCall(__func__, [&] { closeComm(comm, true); });
}

mclResult_t mclCommGetAsyncError(mclComm_t comm, mclResult_t* asyncError) {
  return apiCall(__func__, [&] {
    std::shared_ptr<mcl::PendingInit> init = mcl::pendingOf(comm);
    if (asyncError == nullptr)
      throw error(mclInvalidArgument, "asyncError is NULL");
    if (init) {  // its communicator is not built
      if (init->state() != mcl::PendingInit::State::Failed) {
        *asyncError = mclInProgress;
        return;
      }
      *asyncError = init->code();
      mcl::setLastError(std::string(__func__) + ": " + init->what() + ": " +
                        init->message());
      return;
    }
    mcl::CommRef ref(comm);
    *asyncError = ref->stickyError();
    if (*asyncError != mclSuccess) return;
    if (ref->splitsUnderWay.load() > 0) {
      *asyncError = mclInProgress;
    } else if (ref->finalizing.load()) {
      if (ref->queuedOps.load() > 0) {
        *asyncError = mclInProgress;
      } else {
        ref->finalizing.store(false);
        *asyncError = ref->stickyError();
      }
    }
  });
}

mclResult_t mclCommCount(const mclComm_t comm, int* count) {
  return apiCall(__func__, [&] {
    mcl::CommRef ref(comm);
    if (count == nullptr) throw error(mclInvalidArgument, "count is NULL");
    *count = ref->nranks;
  });
}

mclResult_t mclCommUserRank(const mclComm_t comm, int* rank) {
  return apiCall(__func__, [&] {
    mcl::CommRef ref(comm);
    if (rank == nullptr) throw error(mclInvalidArgument, "rank is NULL");
    *rank = ref->rank;
  });
}

mclResult_t mclCommGetTopology(const mclComm_t comm, char* json, size_t* size) {
  return apiCall(__func__, [&] {
    mcl::CommRef ref(comm);
    if (size == nullptr) throw error(mclInvalidArgument, "size is NULL");
    // Names come from the OS: bytes that are not UTF-8 become U+FFFD.
    nlohmann::json j = mcl::topology::clusterToJson(ref->cluster);
    const mcl::LinkModel& link = ref->context.link;
    j["tuner"] = {{"link_kind", link.kind},
                  {"alpha_us", link.alphaUs},
                  {"gbps", link.gbps},
                  {"reduce_gbps", link.reduceGbps},
                  {"cached_gbps", link.cachedGbps},
                  {"cached_reduce_gbps", link.cachedReduceGbps},
                  {"cache_bytes", link.cacheBytes},
                  {"wires", link.wires},
                  {"probed", ref->settings.tuneProbe},
                  {"chunk_bytes", ref->context.maxStepBytes}};
    const mcl::MemoryFootprint m = mcl::memoryFootprint(*ref);
    nlohmann::json& memory = j["memory"];
    nlohmann::json perPeer = nlohmann::json::object();
    for (const mcl::TransportMemory& t : m.transports) {
      memory[t.transport + "_bytes"] = t.bytes;
      perPeer[t.transport] = t.perPeer;
    }
    memory["staging_peak_bytes"] = ref->stagingPeakBytes.load();
    memory["per_peer_bytes"] = perPeer;
    memory["per_peer_limit_bytes"] = m.limitPerPeer;
    memory["registrations"] = ref->registrations.count();
    memory["peer_mapped_bytes"] =
        ref->peerSegments ? ref->peerSegments->mappedBytes() : 0;
    memory["zero_copy_calls"] =
        ref->peerSegments ? ref->peerSegments->inPlaceCalls() : 0;
    nlohmann::json counters = nlohmann::json::object();
    for (const auto& device : ref->devices)
      for (const auto& [name, value] : device->counters())
        counters[device->name()][name] = value;
    j["transport_counters"] = counters;
    // The links the side channel watches (cable_watch.h): none without it.
    const mcl::CableWatch::Counts cables = ref->peerWatch
                                               ? ref->peerWatch->cableCounts()
                                               : mcl::CableWatch::Counts{};
    j["link_watch"] = {{"links_watched", cables.watched},
                       {"lost", cables.lost},
                       {"regained", cables.regained},
                       {"down_now", cables.downNow},
                       {"left_out_at_init", cables.leftOutAtInit},
                       {"seconds_on_fewer_links", cables.secondsOnFewer}};
    std::string text =
        j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    size_t have = *size;
    *size = text.size() + 1;
    if (json == nullptr) return;
    if (have < text.size() + 1)
      throw error(mclInvalidArgument,
                  "the buffer of %zu bytes is too small: the topology needs "
                  "%zu (pass json = NULL to learn the size)",
                  have, text.size() + 1);
    memcpy(json, text.c_str(), text.size() + 1);
  });
}

}  // extern "C"
