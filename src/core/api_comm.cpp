// Communicator lifetime: init, finalize, destroy, abort, and queries.
#include <chrono>
#include <thread>

#include "core/api_guard.h"
#include "core/comm.h"
#include "core/handle_registry.h"

namespace {

using Clock = std::chrono::steady_clock;

// Waits (sleeping) until done() or the bound passes; returns done().
template <class Done>
bool waitBounded(Done done, std::chrono::milliseconds bound) {
  auto deadline = Clock::now() + bound;
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

std::chrono::milliseconds drainBound(const mclComm& comm) {
  // Every queued operation ends within its timeout; allow a little more.
  return std::chrono::seconds(comm.settings.timeoutSeconds + 5);
}

// Called with a CommRef held (activeCalls >= 1): waits for queued work and
// for other threads' calls to leave, then frees.
void releaseComm(mclComm* comm, bool abort) {
  if (!mcl::unregisterComm(comm))
    throw mcl::error(mclInvalidArgument,
                     "comm %p is being destroyed by another thread",
                     static_cast<void*>(comm));
  auto bound = abort ? std::chrono::milliseconds(10000) : drainBound(*comm);
  bool quiet = waitBounded(
      [&] {
        return comm->queuedOps.load() == 0 && comm->activeCalls.load() <= 1;
      },
      bound);
  if (!quiet)
    throw mcl::error(mclInternalError,
                     "%s: operations still running after %lld ms; the "
                     "communicator is leaked rather than freed under them",
                     comm->label().c_str(),
                     static_cast<long long>(bound.count()));
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
    std::unique_ptr<mclComm> created =
        mcl::initComm(nranks, commId, rank, config);
    mcl::registerComm(created.get());
    *comm = created.release();
  });
}

mclResult_t mclCommInitRank(mclComm_t* comm, int nranks, mclUniqueId commId,
                            int rank) {
  return mclCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

mclResult_t mclCommFinalize(mclComm_t comm) {
  return apiCall(__func__, [&] {
    mcl::CommRef ref(comm);
    ref->finalized.store(true);
    bool drained = waitBounded([&] { return ref->queuedOps.load() == 0; },
                               drainBound(*ref));
    if (!drained)
      throw error(mclTimeout, "%s: queued operations did not finish",
                  ref->label().c_str());
    if (ref->stickyError() != mclSuccess)
      throw mcl::Error(ref->stickyError(), ref->stickyMessage());
  });
}

mclResult_t mclCommDestroy(mclComm_t comm) {
  return apiCall(__func__, [&] {
    {
      mcl::CommRef ref(comm);
      ref->finalized.store(true);
      releaseComm(comm, false);
    }
    delete comm;
  });
}

mclResult_t mclCommAbort(mclComm_t comm) {
  return apiCall(__func__, [&] {
    {
      mcl::CommRef ref(comm);
      ref->aborted.store(true);
      if (ref->context.waker != nullptr) ref->context.waker->interrupt();
      releaseComm(comm, true);
    }
    delete comm;
  });
}

mclResult_t mclCommGetAsyncError(mclComm_t comm, mclResult_t* asyncError) {
  return apiCall(__func__, [&] {
    mcl::CommRef ref(comm);
    if (asyncError == nullptr)
      throw error(mclInvalidArgument, "asyncError is NULL");
    *asyncError = ref->stickyError();
    if (*asyncError != mclSuccess) mcl::setLastError(ref->stickyMessage());
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

}  // extern "C"
