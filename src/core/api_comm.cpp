// Communicator lifetime: init, finalize, destroy, abort, and queries.
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "base/log.h"
#include "core/api_guard.h"
#include "core/bootstrap_root.h"
#include "core/comm.h"
#include "core/comm_memory.h"
#include "core/comm_split.h"
#include "core/group.h"
#include "core/handle_registry.h"
#include "core/launch_env.h"
#include "core/rendezvous_addresses.h"
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

// Destroy and abort: the first caller owns the object. An abort that
// arrives while a destroy drains only speeds it up (the destroy frees).
void closeComm(mclComm_t handle, bool abort) {
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
                                           : " destroyed the communicator"));
  delete comm;
}

}  // namespace

using mcl::apiCall;
using mcl::error;

extern "C" {

mclResult_t mclCommInitRankConfig(mclComm_t* comm, int nranks,
                                  mclUniqueId commId, int rank,
                                  mclConfig_t* config) {
  return apiCall(__func__, [&] {
    if (comm == nullptr) throw error(mclInvalidArgument, "comm is NULL");
    *comm = nullptr;
    *comm = mcl::registerComm(mcl::initComm(nranks, commId, rank, config));
  });
}

mclResult_t mclCommInitFromEnv(mclComm_t* comm, mclConfig_t* config) {
  return apiCall(__func__, [&] {
    if (comm == nullptr) throw error(mclInvalidArgument, "comm is NULL");
    *comm = nullptr;
    mcl::LaunchEnv launch = mcl::readLaunchEnv();
    MCL_LOG(Info, mcl::kLogInit,
            "rank %d of %d from %s; rendezvous at %s from %s", launch.rank,
            launch.nranks, launch.rankSource.c_str(),
            launch.id.root.toString().c_str(), launch.rootSource.c_str());
    if (launch.rankZeroListens && launch.rank == 0) {
      std::vector<mcl::platform::SocketAddress> binds = {launch.id.root};
      if (launch.rootIsName) {
        binds = mcl::rendezvousAddresses();
        for (auto& a : binds) a = a.withPort(launch.id.root.port());
      }
      mcl::startRendezvousRoot(launch.id.secret, binds,
                               mcl::timeoutFromEnvironment());
    }
    *comm = mcl::registerComm(mcl::initComm(
        launch.nranks, mcl::encodeUniqueId(launch.id), launch.rank, config));
  });
}

mclResult_t mclCommInitRank(mclComm_t* comm, int nranks, mclUniqueId commId,
                            int rank) {
  return mclCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

mclResult_t mclCommSplit(mclComm_t comm, int color, int key, mclComm_t* newcomm,
                         mclConfig_t* config) {
  return apiCall(__func__, [&] {
    if (newcomm == nullptr) throw error(mclInvalidArgument, "newcomm is NULL");
    *newcomm = nullptr;
    mcl::CommRef ref(comm);
    ref->checkUsable();
    if (mcl::inGroup())
      throw error(mclInvalidUsage,
                  "%s: mclCommSplit inside mclGroupStart/mclGroupEnd",
                  ref->label().c_str());
    std::unique_ptr<mclComm> child = mcl::splitComm(*ref, color, key, config);
    if (child) *newcomm = mcl::registerComm(std::move(child));
  });
}

mclResult_t mclCommFinalize(mclComm_t comm) {
  return apiCall(__func__, [&] {
    mcl::CommRef ref(comm);
    ref->finalized.store(true);
    if (!drainQueued(*ref))
      throw error(mclTimeout, "%s: queued operations stopped making progress",
                  ref->label().c_str());
    if (ref->stickyError() != mclSuccess)
      throw mcl::Error(ref->stickyError(), ref->stickyMessage());
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
    mcl::CommRef ref(comm);
    if (asyncError == nullptr)
      throw error(mclInvalidArgument, "asyncError is NULL");
    *asyncError = ref->stickyError();
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
