// Building a communicator: rendezvous, transport choice per peer, and the
// shared-memory wiring between the ranks of this host.
#include <unistd.h>

#include <algorithm>
#include <cinttypes>

#include "base/error.h"
#include "base/log.h"
#include "core/bootstrap_client.h"
#include "core/comm.h"
#include "core/params.h"
#include "core/unique_id.h"
#include "platform/host_identity.h"

namespace mcl {

namespace {

std::vector<uint8_t> textBytes(const std::string& s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

std::string bytesText(const std::vector<uint8_t>& b) {
  return std::string(b.begin(), b.end());
}

// Every rank runs this on the same table, so all of them fail alike rather
// than some waiting for the others.
std::vector<int> localRanksOrFail(const mclComm& comm) {
  const std::string& me = comm.peers[static_cast<size_t>(comm.rank)].hostId;
  std::vector<int> local;
  for (int r = 0; r < comm.nranks; ++r) {
    const PeerInfo& p = comm.peers[static_cast<size_t>(r)];
    if (p.hostId == me) {
      local.push_back(r);
      continue;
    }
    throw error(mclInvalidUsage,
                "%s: rank %d is on another host (%s, pid %u) than this rank "
                "(%s); this mcl build reaches peers by shared memory only, "
                "so every rank must run on one host",
                comm.label().c_str(), r, p.hostName.c_str(), p.pid,
                comm.peers[static_cast<size_t>(comm.rank)].hostName.c_str());
  }
  return local;
}

std::string segmentName(uint64_t commId, int rank) {
  char name[40];
  snprintf(name, sizeof(name), "/mcl-%016" PRIx64 "-%d", commId, rank);
  return name;
}

}  // namespace

std::unique_ptr<mclComm> initComm(int nranks, const mclUniqueId& id, int rank,
                                  const mclConfig_t* config) {
  if (nranks < 1)
    throw error(mclInvalidArgument, "nranks %d must be at least 1", nranks);
  if (rank < 0 || rank >= nranks)
    throw error(mclInvalidArgument, "rank %d is out of range [0, %d)", rank,
                nranks);
  UniqueIdContents contents = decodeUniqueId(id);
  auto comm = std::make_unique<mclComm>();
  comm->rank = rank;
  comm->nranks = nranks;
  comm->settings = loadSettings(config);
  warnUnknownEnvironment();
  auto deadline = platform::Clock::now() +
                  std::chrono::seconds(comm->settings.timeoutSeconds);

  Hello hello;
  hello.rank = rank;
  hello.nranks = nranks;
  hello.pid = static_cast<uint32_t>(getpid());
  hello.timeoutMs =
      static_cast<uint32_t>(comm->settings.timeoutSeconds) * 1000u;
  hello.hostId = platform::hostIdentity();
  hello.hostName = platform::hostName();
  BootstrapClient bootstrap(contents, hello, deadline);
  comm->commId = bootstrap.welcome().commId;
  comm->peers = bootstrap.welcome().peers;

  std::vector<int> local = localRanksOrFail(*comm);
  comm->shm = std::make_unique<transport::shm::ShmDevice>(
      rank, local, segmentName(comm->commId, rank), comm->settings.shm);
  // Each rank's segment name and ring capacity; ring schedules must size
  // their rounds alike on every rank, from the smallest ring.
  const transport::shm::ShmOptions& shm = comm->settings.shm;
  uint64_t capacity = uint64_t{shm.slots} * shm.slotBytes;
  auto gathered = bootstrap.allGather(
      textBytes(std::to_string(capacity) + " " + comm->shm->segmentName()));
  uint64_t smallest = capacity;
  std::vector<std::string> names(gathered.size());
  for (size_t r = 0; r < gathered.size(); ++r) {
    std::string text = bytesText(gathered[r]);
    size_t space = text.find(' ');
    if (space == std::string::npos)
      throw error(mclRemoteError, "rank %zu sent malformed shm details", r);
    smallest = std::min<uint64_t>(smallest, std::stoull(text.substr(0, space)));
    names[r] = text.substr(space + 1);
  }
  for (int peer : local)
    comm->shm->mapPeer(
        peer, names[static_cast<size_t>(peer)],
        static_cast<int>(comm->peers[static_cast<size_t>(peer)].pid));
  bootstrap.barrier();  // every rank has mapped every segment
  comm->shm->unlinkOwnSegment();
  bootstrap.close();

  comm->connections.resize(static_cast<size_t>(nranks));
  comm->p2pConnections.resize(static_cast<size_t>(nranks));
  comm->context.peers.resize(static_cast<size_t>(nranks));
  comm->context.p2pPeers.resize(static_cast<size_t>(nranks));
  for (int peer : local) {
    auto p = static_cast<size_t>(peer);
    comm->connections[p] =
        comm->shm->connect(peer, transport::shm::kCollectiveChannel);
    comm->context.peers[p] = comm->connections[p].get();
    comm->p2pConnections[p] =
        comm->shm->connect(peer, transport::shm::kPointToPointChannel);
    comm->context.p2pPeers[p] = comm->p2pConnections[p].get();
  }
  comm->context.rank = rank;
  comm->context.nranks = nranks;
  comm->context.waker = &comm->shm->waker();
  comm->context.timeout = std::chrono::seconds(comm->settings.timeoutSeconds);
  comm->context.wait =
      waitPolicyFor(comm->settings, static_cast<int>(local.size()));
  comm->context.aborted = &comm->aborted;
  comm->context.maxStepBytes = static_cast<size_t>(smallest / 2);
  MCL_LOG(Info, kLogInit,
          "%s: ready, comm %016" PRIx64
          ", %zu local ranks over shm, %zu "
          "bytes of rings mapped, timeout %d s",
          comm->label().c_str(), comm->commId, local.size(),
          comm->shm->bytesMapped(), comm->settings.timeoutSeconds);
  return comm;
}

}  // namespace mcl
