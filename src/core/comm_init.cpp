// Building a communicator: rendezvous, the transport for each peer (shared
// memory within a host, TCP between hosts, or as MCL_TRANSPORT forces), and
// the wiring of both.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/algorithm_table.h"
#include "algorithms/tuner.h"
#include "base/error.h"
#include "base/log.h"
#include "base/wire.h"
#include "core/bootstrap_client.h"
#include "core/bootstrap_root.h"
#include "core/both_wakers.h"
#include "core/comm.h"
#include "core/comm_memory.h"
#include "core/comm_rdma.h"
#include "core/comm_topology.h"
#include "core/init_details.h"
#include "core/params.h"
#include "core/tune_probe.h"
#include "core/unique_id.h"
#include "platform/cpu.h"
#include "platform/host_identity.h"

namespace mcl {

namespace {

std::string segmentName(uint64_t commId, int rank) {
  char name[40];
  snprintf(name, sizeof(name), "/mcl-%016" PRIx64 "-%d", commId, rank);
  return name;
}

// Which peers each transport serves. Every rank derives this from the same
// table, so all agree (and all fail alike when a pair cannot be served).
struct Plan {
  std::vector<int> shmRanks;   // this host's ranks on shm, ascending, with us
  std::vector<int> tcpPeers;   // ranks reached over TCP
  std::vector<int> rdmaPeers;  // ranks reached over RDMA (MCL_TRANSPORT=rdma)
  std::vector<bool> sameHost;
  bool anyTcp = false;  // some pair of ranks in the comm uses TCP
};

Plan planTransports(const mclComm& comm) {
  Plan plan;
  const std::string& transport = comm.settings.transport;
  const auto& peers = comm.peers;
  const std::string& me = peers[static_cast<size_t>(comm.rank)].hostId;
  for (int r = 0; r < comm.nranks; ++r) {
    bool local = peers[static_cast<size_t>(r)].hostId == me;
    plan.sameHost.push_back(local);
    if (rdmaBetween(comm, comm.rank, r)) {
      plan.rdmaPeers.push_back(r);
    } else if (r == comm.rank || (local && transport != "tcp")) {
      plan.shmRanks.push_back(r);
    } else if (transport == "shm") {
      throw error(mclInvalidUsage,
                  "%s: rank %d is on another host (%s) and MCL_TRANSPORT=shm "
                  "reaches only this host (%s)",
                  comm.label().c_str(), r,
                  peers[static_cast<size_t>(r)].hostName.c_str(),
                  peers[static_cast<size_t>(comm.rank)].hostName.c_str());
    } else {
      plan.tcpPeers.push_back(r);
    }
  }
  if (transport == "rdma" && comm.nranks > 1 && plan.rdmaPeers.empty() &&
      plan.shmRanks.size() == size_t(comm.nranks))
    throw error(mclInvalidUsage,
                "%s: MCL_TRANSPORT=rdma, but all %d ranks are on this host "
                "(%s): RDMA runs between Macs over Thunderbolt cables, ranks "
                "of one Mac share memory (MCL_TRANSPORT=shm); "
                "MCL_RDMA_PROVIDER=emu runs the emulated fabric, one Mac per "
                "rank",
                comm.label().c_str(), comm.nranks,
                peers[static_cast<size_t>(comm.rank)].hostName.c_str());
  plan.anyTcp = transport == "tcp" && comm.nranks > 1;
  for (const auto& p : peers)
    if (p.hostId != peers.front().hostId && transport != "rdma")
      plan.anyTcp = true;  // under rdma, hosts talk over their cables
  return plan;
}

}  // namespace

// The tuner's link model, alike on every rank: the slowest kind of link
// some pair of ranks uses, and whether some machine runs more ranks than it
// has cores (each hop then waits for a context switch). A machine, not a
// host: network namespaces or containers of one kernel share its cores
// (their host identities start with the same boot id).
LinkModel tunerLink(const mclComm& comm, const Plan& plan,
                    const std::vector<TransportDetails>& all) {
  std::map<std::string, std::pair<int, uint32_t>> machines;  // ranks, cores
  for (size_t r = 0; r < all.size(); ++r) {
    const std::string& host = comm.peers[r].hostId;
    auto& [ranks, cores] = machines[host.substr(0, host.find('/'))];
    ++ranks;
    cores = cores == 0 ? all[r].cores : std::min(cores, all[r].cores);
  }
  bool crowded = false;
  for (const auto& [machine, load] : machines)
    crowded |= load.second > 0 && uint32_t(load.first) > load.second;
  if (comm.settings.transport == "rdma") {
    LinkModel m = defaultLinkModel(comm.settings.rdma.provider.provider == "emu"
                                       ? "emulated rdma"
                                       : "rdma",
                                   crowded);
    m.wires = std::max(1, comm.rdmaWires);
    return m;
  }
  return defaultLinkModel(plan.anyTcp ? "tcp" : "shm", crowded);
}

std::unique_ptr<mclComm> initComm(int nranks, const mclUniqueId& id, int rank,
                                  const mclConfig_t* config, int emuMac) {
  if (nranks < 1 || static_cast<uint32_t>(nranks) > kMaxRanks)
    throw error(mclInvalidArgument, "nranks %d must be between 1 and %u",
                nranks, kMaxRanks);
  if (rank < 0 || rank >= nranks)
    throw error(mclInvalidArgument, "rank %d is out of range [0, %d)", rank,
                nranks);
  UniqueIdContents contents = decodeUniqueId(id);
  auto comm = std::make_unique<mclComm>();
  comm->rank = rank;
  comm->nranks = nranks;
  comm->emuMac = emuMac < 0 ? rank : emuMac;
  comm->settings = loadSettings(config);
  comm->label();  // built now, before any other thread can see the comm
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
  Plan plan = planTransports(*comm);

  const auto& shmOptions = comm->settings.shm;
  comm->shmPeers = static_cast<int>(plan.shmRanks.size()) - 1;
  comm->tcpPeers = static_cast<int>(plan.tcpPeers.size());
  comm->peerBufferLimit = static_cast<uint64_t>(
      paramInt("MCL_PEER_BUFFER_LIMIT", 1 << 16, int64_t{1} << 40));
  // Before anything is allocated; RDMA again once its cables are known.
  checkPeerBufferLimit(*comm, comm->shmPeers > 0, comm->tcpPeers > 0,
                       plan.rdmaPeers.empty() ? 0 : 1);
  comm->shm = std::make_unique<transport::shm::ShmDevice>(
      rank, plan.shmRanks, segmentName(comm->commId, rank), shmOptions);
  TransportDetails mine;
  mine.shmCapacity = uint64_t{shmOptions.slots} * shmOptions.slotBytes;
  mine.segment = comm->shm->segmentName();
  mine.inventory = localInventory(*comm, deadline);
  TopologyFileRead topoFile = readTopologyFile(*comm);
  mine.topoFile = topoFile.status.substr(0, 4000);
  mine.transport = comm->settings.transport;
  mine.cores = static_cast<uint32_t>(platform::onlineCpuCount());
  const int64_t zeroCopyMin =
      paramInt("MCL_ZERO_COPY_MIN_BYTES", 0, int64_t{1} << 50);
  mine.algorithms = describeForced(comm->settings.forced) +
                    (comm->settings.tuneProbe ? " (MCL_TUNE_PROBE=1)" : "") +
                    (comm->settings.checkCalls ? " (MCL_CHECK=1)" : "") +
                    " (zero-copy from " + std::to_string(zeroCopyMin) + " B)";
  if (!plan.rdmaPeers.empty()) {
    comm->rdma = openRdmaDevice(*comm);
    mine.rdmaFrameBytes = comm->settings.rdma.shape.frameBytes;
    mine.rdmaDepth = static_cast<uint32_t>(comm->settings.rdma.shape.depth);
  }
  if (plan.anyTcp) {
    comm->tcp = std::make_unique<transport::tcp::TcpDevice>(
        rank, contents.secret, comm->commId, comm->settings.tcp);
    const auto& slots = comm->settings.tcp.slots;
    mine.tcpCapacity = uint64_t{slots.slots} * slots.slotBytes;
    mine.tcpSockets = static_cast<uint32_t>(comm->settings.tcp.socketsPerLink);
    mine.tcpSlotBytes = slots.slotBytes;
    mine.endpoints = transport::tcp::encodeEndpoints(comm->tcp->endpoints());
  }
  std::vector<TransportDetails> all;
  for (const auto& bytes : bootstrap.allGather(encodeDetails(mine)))
    all.push_back(decodeDetails(bytes));
  // Ranks that disagree on the transport would not even agree on how many
  // rounds init takes.
  for (size_t r = 0; r < all.size(); ++r)
    if (all[r].transport != mine.transport ||
        all[r].rdmaFrameBytes != mine.rdmaFrameBytes ||
        all[r].rdmaDepth != mine.rdmaDepth)
      throw error(mclInvalidUsage,
                  "%s: rank %zu has MCL_TRANSPORT=%s (RDMA frames %u x %u), "
                  "this rank %s (%u x %u): set them alike on every rank",
                  comm->label().c_str(), r, all[r].transport.c_str(),
                  all[r].rdmaFrameBytes, all[r].rdmaDepth,
                  mine.transport.c_str(), mine.rdmaFrameBytes, mine.rdmaDepth);
  // Ranks running different algorithms would exchange different bytes.
  for (size_t r = 0; r < all.size(); ++r)
    if (all[r].algorithms != mine.algorithms)
      throw error(mclInvalidUsage,
                  "%s: rank %zu forces algorithms \"%s\", this rank \"%s\": "
                  "set MCL_ALGO, MCL_TUNE_PROBE, MCL_ZERO_COPY_MIN_BYTES and "
                  "MCL_CHECK alike on every rank",
                  comm->label().c_str(), r, all[r].algorithms.c_str(),
                  mine.algorithms.c_str());
  // Every rank builds the same cluster from the same data, so a bad
  // MCL_TOPO_FILE fails all of them alike, before anything is mapped.
  std::vector<std::vector<transport::tcp::Endpoint>> endpoints;
  std::vector<std::string> inventories;
  std::vector<std::string> fileStatus;
  for (const auto& d : all) {
    if (comm->tcp)
      endpoints.push_back(transport::tcp::decodeEndpoints(d.endpoints));
    inventories.push_back(d.inventory);
    fileStatus.push_back(d.topoFile);
  }
  comm->cluster =
      buildCommCluster(*comm, topoFile, fileStatus, inventories, endpoints);

  // Ring schedules size their rounds alike on every rank, from the smallest
  // buffer between any two ranks.
  for (size_t r = 0; r < all.size(); ++r)
    if (all[r].tcpSockets != mine.tcpSockets ||
        all[r].tcpSlotBytes != mine.tcpSlotBytes)
      throw error(mclInvalidUsage,
                  "%s: rank %zu has MCL_TCP_NSOCKS=%u MCL_TCP_SLOT_BYTES=%u, "
                  "this rank %u and %u: set them alike on every rank",
                  comm->label().c_str(), r, all[r].tcpSockets,
                  all[r].tcpSlotBytes, mine.tcpSockets, mine.tcpSlotBytes);
  // Shared memory counts only where two ranks share a host and use it.
  bool anyShmPair = false;
  if (comm->settings.transport != "tcp")
    for (int a = 0; a < nranks && !anyShmPair; ++a)
      for (int b = a + 1; b < nranks; ++b)
        if (comm->peers[static_cast<size_t>(a)].hostId ==
            comm->peers[static_cast<size_t>(b)].hostId) {
          anyShmPair = true;
          break;
        }
  uint64_t smallest = UINT64_MAX;
  for (const auto& d : all) {
    if (anyShmPair || !plan.anyTcp)
      smallest = std::min(smallest, d.shmCapacity);
    if (d.tcpCapacity > 0) smallest = std::min(smallest, d.tcpCapacity);
  }
  if (comm->rdma)
    smallest = std::min<uint64_t>(smallest, comm->rdma->capacityPerWire());
  for (int peer : plan.shmRanks)
    comm->shm->mapPeer(
        peer, all[static_cast<size_t>(peer)].segment,
        static_cast<int>(comm->peers[static_cast<size_t>(peer)].pid));
  if (comm->tcp)
    comm->tcp->connectPeers(endpoints, plan.tcpPeers, plan.sameHost,
                            fileRestrictions(*comm, comm->cluster), deadline);
  if (comm->rdma) {
    wireRdma(*comm, plan.rdmaPeers, bootstrap);
    checkPeerBufferLimit(*comm, false, false,
                         static_cast<int>(comm->rdma->mostCablesToOnePeer()));
  }
  // Before the barrier: if rank 0 cannot write the dump, the others learn
  // it there instead of in their first collective.
  reportCluster(*comm, comm->cluster);
  bootstrap.barrier();  // every segment mapped, every socket connected
  comm->shm->unlinkOwnSegment();
  if (comm->tcp) comm->tcp->stopListening();
  bootstrap.close();
  waitForRendezvousRoot(comm->commId, deadline);

  auto n = static_cast<size_t>(nranks);
  comm->connections.resize(n);
  comm->p2pConnections.resize(n);
  comm->context.peers.resize(n);
  comm->context.p2pPeers.resize(n);
  for (int peer : plan.shmRanks) {
    auto p = static_cast<size_t>(peer);
    comm->connections[p] =
        comm->shm->connect(peer, transport::shm::kCollectiveChannel);
    comm->p2pConnections[p] =
        comm->shm->connect(peer, transport::shm::kPointToPointChannel);
  }
  for (int peer : plan.tcpPeers) {
    auto p = static_cast<size_t>(peer);
    comm->connections[p] = comm->tcp->connect(peer, 0);
    comm->p2pConnections[p] = comm->tcp->connect(peer, 1);
  }
  for (int peer : plan.rdmaPeers) {
    auto p = static_cast<size_t>(peer);
    comm->connections[p] = comm->rdma->connect(peer, 0);
    comm->p2pConnections[p] = comm->rdma->connect(peer, 1);
  }
  for (size_t p = 0; p < n; ++p) {
    comm->context.peers[p] = comm->connections[p].get();
    comm->context.p2pPeers[p] = comm->p2pConnections[p].get();
  }
  comm->context.rank = rank;
  comm->context.nranks = nranks;
  if (comm->rdma) {
    comm->context.waker = &comm->rdma->waker();
  } else if (plan.tcpPeers.empty()) {
    comm->context.waker = &comm->shm->waker();
  } else if (plan.shmRanks.size() == 1) {
    comm->context.waker = &comm->tcp->waker();
  } else {
    comm->combinedWaker =
        std::make_unique<BothWakers>(comm->shm->waker(), comm->tcp->waker());
    comm->context.waker = comm->combinedWaker.get();
  }
  comm->context.timeout = std::chrono::seconds(comm->settings.timeoutSeconds);
  // Oversubscription counts every rank of this host, whatever transport
  // joins them: they all compete for its cores.
  int ranksHere = static_cast<int>(
      std::count(plan.sameHost.begin(), plan.sameHost.end(), true));
  comm->context.wait = waitPolicyFor(comm->settings, ranksHere);
  comm->context.forced = comm->settings.forced;
  comm->context.link = tunerLink(*comm, plan, all);
  comm->context.aborted = &comm->aborted;
  comm->context.maxStepBytes = static_cast<size_t>(smallest / 2);
  comm->context.allShm = nranks > 1 && comm->shmPeers == nranks - 1;
  if (comm->context.allShm && zeroCopyMin > 0) {
    comm->peerSegments = std::make_unique<PeerSegments>(rank);
    comm->context.sharedBuffers = comm->peerSegments.get();
    comm->context.zeroCopyMinBytes = static_cast<size_t>(zeroCopyMin);
  }
  MCL_LOG(Info, kLogInit,
          "%s: ready, comm %016" PRIx64
          ", %zu ranks over shm, %zu peers "
          "over tcp, %zu over rdma%s, timeout %d s",
          comm->label().c_str(), comm->commId, plan.shmRanks.size(),
          plan.tcpPeers.size(), plan.rdmaPeers.size(),
          comm->rdma && comm->rdma->emulated() ? " (emulated)" : "",
          comm->settings.timeoutSeconds);
  if (comm->settings.tuneProbe) probeLinkModel(*comm);
  return comm;
}

}  // namespace mcl
