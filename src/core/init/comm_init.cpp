// Building a communicator, in phases every rank runs alike: join the
// rendezvous; open the transports some pair may use and exchange what each
// rank offers; agree on the settings that must match and build the cluster
// picture; choose each pair's transport (transport_choice.h); connect; and
// give the algorithms their context.
#include "core/init/comm_init.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/algorithm_table.h"
#include "algorithms/tuner.h"
#include "base/error.h"
#include "base/log.h"
#include "core/bootstrap/bootstrap_client.h"
#include "core/bootstrap/bootstrap_root.h"
#include "core/bootstrap/init_cancel.h"
#include "core/bootstrap/unique_id.h"
#include "core/comm/comm.h"
#include "core/comm/comm_memory.h"
#include "core/comm/comm_topology.h"
#include "core/init/combined_waker.h"
#include "core/init/init_details.h"
#include "core/init/leftover_segments.h"
#include "core/init/tune_probe.h"
#include "core/liveness/cable_watch.h"
#include "core/params/params.h"
#include "core/params/settings.h"
#include "core/registry/transport_registry.h"
#include "platform/cpu.h"
#include "platform/host_identity.h"
#include "platform/shared_memory.h"
#include "topology/finding_text.h"
#include "transports/device.h"

namespace mcl {

namespace {

// The rounds a transport runs during connect go over the rendezvous.
class BootstrapExchange final : public transport::InitExchange {
 public:
  explicit BootstrapExchange(BootstrapClient& bootstrap)
      : bootstrap_(bootstrap) {}
  std::vector<std::vector<uint8_t>> allGather(
      const std::vector<uint8_t>& mine) override {
    return bootstrap_.allGather(mine);
  }
  void throwIfAbandoned() override { bootstrap_.throwIfFailed(); }

 private:
  BootstrapClient& bootstrap_;
};

// The transports MCL_TRANSPORT lets this communicator try, made (and their
// settings checked) before the rendezvous.
DeviceList makeDevices(const mclComm& comm, const Secret& secret) {
  transport::DeviceInit init;
  init.rank = comm.rank;
  init.nranks = comm.nranks;
  init.secret = secret;
  init.label = comm.label();
  init.emuMac = comm.emuMac;
  init.params = &environmentParams();
  DeviceList devices;
  for (const TransportEntry& entry : transportsFor(comm.settings.transport))
    devices.push_back(entry.make(init));
  return devices;
}

std::unique_ptr<BootstrapClient> joinRendezvous(mclComm& comm,
                                                const UniqueIdContents& id,
                                                platform::Deadline deadline) {
  Hello hello;
  hello.rank = comm.rank;
  hello.nranks = comm.nranks;
  hello.pid = static_cast<uint32_t>(getpid());
  hello.timeoutMs = static_cast<uint32_t>(comm.settings.timeoutSeconds) * 1000u;
  hello.hostId = platform::hostIdentity();
  hello.hostName = platform::hostName();
  const platform::SharedMemoryRoom room = platform::sharedMemoryRoom();
  if (room.known) hello.shmFreeBytes = room.freeBytes;
  auto bootstrap = std::make_unique<BootstrapClient>(id, hello, deadline);
  comm.commId = bootstrap->welcome().commId;
  comm.peers = bootstrap->welcome().peers;
  std::vector<transport::RankPlace> places;
  for (const PeerInfo& p : comm.peers)
    places.push_back({p.hostId, p.hostName, p.pid, p.shmFreeBytes});
  for (auto& device : comm.devices) device->joined(comm.commId, places);
  return bootstrap;
}

// Opens every transport some pair of the communicator may use (alike on
// every rank), within the buffer limit.
std::vector<bool> openTransports(mclComm& comm, platform::Deadline deadline) {
  TransportCandidates c =
      transportCandidates(comm.devices, comm.rank, comm.nranks);
  for (size_t d = 0; d < comm.devices.size(); ++d) {
    if (!c.open[d]) continue;
    bool otherRanks = std::any_of(c.ofRank[d].begin(), c.ofRank[d].end(),
                                  [&](int r) { return r != comm.rank; });
    if (otherRanks) checkPeerBufferLimit(comm, *comm.devices[d]);
    comm.devices[d]->open(c.ofRank[d], deadline);
  }
  return c.open;
}

// The settings every rank must share, as this rank states them: ranks that
// run different algorithms would exchange different bytes.
std::string algorithmsStated(const CommSettings& s, int64_t zeroCopyMin) {
  return describeForced(s.forced) + (s.tuneProbe ? " (MCL_TUNE_PROBE=1)" : "") +
         (s.checkCalls ? " (MCL_CHECK=1)" : "") + " (zero-copy from " +
         std::to_string(zeroCopyMin) + " B)";
}

// What this rank tells the others in init's first all-gather.
InitDetails detailsOf(const mclComm& comm, const std::vector<bool>& opened,
                      const TopologyFileRead& topoFile, int64_t zeroCopyMin,
                      platform::Deadline deadline) {
  InitDetails mine;
  for (size_t d = 0; d < comm.devices.size(); ++d)
    if (opened[d])
      mine.devices.emplace_back(comm.devices[d]->name(),
                                comm.devices[d]->details());
  mine.inventory = localInventory(comm, deadline);
  mine.topoFile = topoFile.status.substr(0, 4000);
  mine.transport = comm.settings.transport;
  mine.algorithms = algorithmsStated(comm.settings, zeroCopyMin);
  mine.cores = static_cast<uint32_t>(platform::onlineCpuCount());
  if (comm.peerWatch) mine.sideChannel = comm.peerWatch->address();
  mine.peerTimeoutSeconds =
      static_cast<uint32_t>(comm.settings.peerTimeoutSeconds);
  return mine;
}

topology::Cluster clusterOf(const mclComm& comm,
                            const TopologyFileRead& topoFile,
                            const std::vector<InitDetails>& all) {
  std::vector<std::string> inventories;
  std::vector<std::string> fileStatus;
  for (const InitDetails& d : all) {
    inventories.push_back(d.inventory);
    fileStatus.push_back(d.topoFile);
  }
  return buildCommCluster(comm, topoFile, fileStatus, inventories);
}

std::string openedNames(const InitDetails& d) {
  std::string names;
  for (const auto& [name, bytes] : d.devices)
    names += (names.empty() ? "" : ", ") + name;
  return names.empty() ? "none" : names;
}

// Every rank's details against this rank's: the same transport setting,
// algorithms, and transports opened. Ranks that disagree would not even
// agree on how many rounds init takes.
void checkAgreement(const mclComm& comm, const std::vector<InitDetails>& all,
                    const InitDetails& mine) {
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].transport != mine.transport)
      throw error(mclInvalidUsage,
                  "%s: rank %zu has MCL_TRANSPORT=%s, this rank %s: set it "
                  "alike on every rank",
                  comm.label().c_str(), r, all[r].transport.c_str(),
                  mine.transport.c_str());
    if (all[r].peerTimeoutSeconds != mine.peerTimeoutSeconds)
      throw error(mclInvalidUsage,
                  "%s: rank %zu has MCL_PEER_TIMEOUT=%u, this rank %u: set it "
                  "alike on every rank",
                  comm.label().c_str(), r, all[r].peerTimeoutSeconds,
                  mine.peerTimeoutSeconds);
    if (all[r].algorithms != mine.algorithms)
      throw error(mclInvalidUsage,
                  "%s: rank %zu forces algorithms \"%s\", this rank \"%s\": "
                  "set MCL_ALGO, MCL_TUNE_PROBE, MCL_ZERO_COPY_MIN_BYTES and "
                  "MCL_CHECK alike on every rank",
                  comm.label().c_str(), r, all[r].algorithms.c_str(),
                  mine.algorithms.c_str());
    bool sameDevices = all[r].devices.size() == mine.devices.size();
    for (size_t d = 0; sameDevices && d < mine.devices.size(); ++d)
      sameDevices = all[r].devices[d].first == mine.devices[d].first;
    if (!sameDevices)
      throw error(mclInvalidUsage,
                  "%s: rank %zu opened the transports %s, this rank %s: "
                  "their settings (MCL_RDMA_PROVIDER, ...) differ between "
                  "ranks; set them alike on every rank",
                  comm.label().c_str(), r, openedNames(all[r]).c_str(),
                  openedNames(mine).c_str());
  }
}

// Each opened transport reads every rank's details.
void teachTransports(mclComm& comm, const std::vector<bool>& opened,
                     const std::vector<InitDetails>& all) {
  size_t slot = 0;  // the opened ones, in order, as in every rank's details
  for (size_t d = 0; d < comm.devices.size(); ++d) {
    if (!opened[d]) continue;
    std::vector<std::vector<uint8_t>> theirs;
    for (const InitDetails& r : all) theirs.push_back(r.devices[slot].second);
    comm.devices[d]->learn(theirs, comm.cluster);
    ++slot;
  }
}

// The name of the one host every rank runs on, else "".
std::string oneHostName(const mclComm& comm) {
  for (const PeerInfo& p : comm.peers)
    if (p.hostId != comm.peers.front().hostId) return "";
  return comm.peers.front().hostName;
}

// The devices this rank uses toward other ranks, in priority order; the
// one of its own connection when it has no other rank.
std::vector<size_t> devicesOfThisRank(const mclComm& comm) {
  std::vector<size_t> used;
  for (size_t d = 0; d < comm.devices.size(); ++d)
    for (int peer = 0; peer < comm.nranks; ++peer)
      if (peer != comm.rank &&
          comm.transports.deviceOf(comm.rank, peer) == int(d)) {
        used.push_back(d);
        break;
      }
  if (used.empty())
    used.push_back(size_t(comm.transports.deviceOf(comm.rank, comm.rank)));
  return used;
}

// Every device that joins some pair connects its peers, on every rank
// (so that rounds of the rendezvous match); then the init barrier.
void connectTransports(mclComm& comm, const std::vector<bool>& opened,
                       BootstrapClient& bootstrap,
                       platform::Deadline deadline) {
  BootstrapExchange exchange(bootstrap);
  for (size_t d = 0; d < comm.devices.size(); ++d) {
    if (!comm.transports.usesDevice(int(d)) &&
        !comm.transports.standsBy(int(d)))
      continue;
    comm.devices[d]->connect(
        comm.transports.peersConnectedOver(comm.rank, int(d)), exchange,
        deadline);
    checkPeerBufferLimit(comm, *comm.devices[d]);  // now with its wires
  }
  // This rank's pairs as connected: the links they use (a cable init left
  // out is not among them).
  refreshOwnPaths(comm, comm.cluster);
  // Before the barrier: if rank 0 cannot write the dump, the others learn
  // it there instead of in their first collective.
  reportCluster(comm, comm.cluster);
  bootstrap.barrier();  // every segment mapped, every socket connected
  for (size_t d = 0; d < comm.devices.size(); ++d)
    if (opened[d]) comm.devices[d]->afterBarrier();
  bootstrap.close();
  waitForRendezvousRoot(comm.commId, deadline);

  const auto n = size_t(comm.nranks);
  comm.connections.resize(n);
  comm.p2pConnections.resize(n);
  for (int peer = 0; peer < comm.nranks; ++peer) {
    transport::Device& device =
        *comm.devices[size_t(comm.transports.deviceOf(comm.rank, peer))];
    comm.connections[size_t(peer)] =
        device.connection(peer, transport::Channel::Collective);
    comm.p2pConnections[size_t(peer)] =
        device.connection(peer, transport::Channel::PointToPoint);
    const int standby = comm.transports.standbyOf(comm.rank, peer);
    if (standby < 0 || peer == comm.rank) continue;
    transport::Device& beside = *comm.devices[size_t(standby)];
    comm.connections[size_t(peer)]->keepStandby(
        beside.connection(peer, transport::Channel::Collective));
    comm.p2pConnections[size_t(peer)]->keepStandby(
        beside.connection(peer, transport::Channel::PointToPoint));
  }
}

// The side channel's thread also watches the links this rank's
// connections ride (cable_watch.h), once they are connected.
void watchCables(mclComm& comm) {
  if (!comm.peerWatch) return;
  std::vector<transport::PeerLinks> links;
  std::vector<size_t> watched = devicesOfThisRank(comm);
  for (int peer = 0; peer < comm.nranks; ++peer) {
    const int standby = comm.transports.standbyOf(comm.rank, peer);
    if (peer != comm.rank && standby >= 0 &&
        std::find(watched.begin(), watched.end(), size_t(standby)) ==
            watched.end())
      watched.push_back(size_t(standby));
  }
  for (size_t d : watched)
    for (transport::PeerLinks& p : comm.devices[d]->watchedLinks()) {
      p.standbyOnly = comm.transports.deviceOf(comm.rank, p.peer) != int(d);
      if (!p.standbyOnly ||
          comm.transports.standbyOf(comm.rank, p.peer) == int(d))
        links.push_back(std::move(p));
    }
  std::vector<std::string> hosts;  // "host 1 (studio-b)", as the doctor says
  for (int r = 0; r < comm.nranks; ++r)
    hosts.push_back(
        topology::hostLabel(comm.cluster, comm.cluster.hostOfRank(r)));
  comm.peerWatch->watchCables(std::make_unique<CableWatch>(
      comm.rank, comm.label(), std::move(hosts), std::move(links)));
}

// The side channel (peer_watch.h): listening before the first all-gather
// publishes its address, connected to every peer after it.
void openSideChannel(mclComm& comm, const BootstrapClient& bootstrap,
                     const Secret& secret) {
  if (comm.nranks == 1 || comm.settings.peerTimeoutSeconds == 0) return;
  comm.peerWatch = std::make_unique<PeerWatch>(
      comm.rank, comm.nranks, comm.commId, secret, bootstrap.localAddress(),
      std::chrono::seconds(comm.settings.peerTimeoutSeconds), comm.label());
}

void connectSideChannel(mclComm& comm, const std::vector<InitDetails>& all,
                        BootstrapClient& bootstrap,
                        platform::Deadline deadline) {
  if (!comm.peerWatch) return;
  std::vector<std::string> addresses;
  for (const InitDetails& d : all) addresses.push_back(d.sideChannel);
  comm.peerWatch->connect(addresses, deadline, bootstrap.fd(),
                          [&bootstrap] { bootstrap.throwIfFailed(); });
}

// The tuner's link model, alike on every rank: the slowest kind of link
// some pair of ranks uses, and whether some machine runs more ranks than it
// has cores (each hop then waits for a context switch). A machine, not a
// host: network namespaces or containers of one kernel share its cores
// (their host identities start with the same boot id).
LinkModel tunerLink(const mclComm& comm, const std::vector<InitDetails>& all) {
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
  const transport::Device* slowest = nullptr;
  for (int a = 0; a < comm.nranks; ++a)
    for (int b = a + 1; b < comm.nranks; ++b) {
      const transport::Device* d =
          comm.devices[size_t(comm.transports.deviceOf(a, b))].get();
      if (slowest == nullptr || d->linkKind() > slowest->linkKind())
        slowest = d;
    }
  if (slowest == nullptr)
    return defaultLinkModel(
        transport::linkKindName(transport::LinkKind::SharedMemory), crowded);
  LinkModel m =
      defaultLinkModel(transport::linkKindName(slowest->linkKind()), crowded);
  m.wires = std::max(1, slowest->fewestWires());
  return m;
}

// What the algorithms see of the communicator once it is connected.
void buildAlgoContext(mclComm& comm, const std::vector<InitDetails>& all,
                      int64_t zeroCopyMin) {
  AlgoContext& c = comm.context;
  const auto n = size_t(comm.nranks);
  c.peers.resize(n);
  c.p2pPeers.resize(n);
  for (size_t p = 0; p < n; ++p) {
    c.peers[p] = comm.connections[p].get();
    c.p2pPeers[p] = comm.p2pConnections[p].get();
  }
  c.rank = comm.rank;
  c.nranks = comm.nranks;
  std::vector<size_t> mine = devicesOfThisRank(comm);
  if (mine.size() == 1) {
    c.waker = &comm.devices[mine.front()]->waker();
  } else {
    std::vector<transport::Waker*> wakers;
    for (size_t d : mine) wakers.push_back(&comm.devices[d]->waker());
    comm.combinedWaker = std::make_unique<CombinedWaker>(std::move(wakers));
    c.waker = comm.combinedWaker.get();
  }
  c.timeout = std::chrono::seconds(comm.settings.timeoutSeconds);
  // Oversubscription counts every rank of this host, whatever transport
  // joins them: they all compete for its cores.
  const std::string& here = comm.peers[size_t(comm.rank)].hostId;
  int ranksHere =
      int(std::count_if(comm.peers.begin(), comm.peers.end(),
                        [&](const PeerInfo& p) { return p.hostId == here; }));
  c.wait = waitPolicyFor(comm.settings, ranksHere);
  c.forced = comm.settings.forced;
  c.link = tunerLink(comm, all);
  c.aborted = &comm.aborted;
  c.health = comm.peerWatch.get();
  c.call = &comm.callScratch;
  // Ring schedules size their rounds alike on every rank, from the
  // smallest buffer between any two ranks of any transport in use.
  uint64_t smallest = UINT64_MAX;
  // A standby carries a pair's steps once it took over: its buffer counts.
  for (size_t d = 0; d < comm.devices.size(); ++d)
    if (comm.transports.joinsSomePair(int(d)) ||
        comm.transports.standsBy(int(d)))
      smallest = std::min(smallest, comm.devices[d]->receiveCapacity());
  if (smallest == UINT64_MAX)  // one rank: its own connection's
    smallest =
        comm.devices[size_t(comm.transports.deviceOf(0, 0))]->receiveCapacity();
  c.maxStepBytes = static_cast<size_t>(smallest / 2);
  c.allShm = comm.nranks > 1;
  for (int peer = 0; peer < comm.nranks; ++peer)
    c.allShm &= comm.devices[size_t(comm.transports.deviceOf(comm.rank, peer))]
                    ->linkKind() == transport::LinkKind::SharedMemory;
  if (c.allShm && zeroCopyMin > 0) {
    comm.peerSegments = std::make_unique<PeerSegments>(comm.rank);
    c.sharedBuffers = comm.peerSegments.get();
    c.zeroCopyMinBytes = static_cast<size_t>(zeroCopyMin);
  }
}

void logReady(const mclComm& comm) {
  std::string over;
  for (size_t d = 0; d < comm.devices.size(); ++d) {
    size_t ranks = comm.transports.peersOver(comm.rank, int(d)).size();
    if (ranks == 0) continue;
    over += std::string(over.empty() ? "" : ", ") + "over " +
            comm.devices[d]->name() + " " + std::to_string(ranks) + " ranks";
    if (comm.devices[d]->linkKind() == transport::LinkKind::EmulatedRdma)
      over += " (emulated)";
  }
  MCL_LOG(Info, kLogInit,
          "%s: ready, comm %016" PRIx64
          ", %s (this rank included), timeout "
          "%d s",
          comm.label().c_str(), comm.commId, over.c_str(),
          comm.settings.timeoutSeconds);
}

// Everything after the rendezvous: open, tell the others, agree, connect.
void connectJoined(mclComm& comm, BootstrapClient& bootstrap,
                   const UniqueIdContents& contents, int64_t zeroCopyMin,
                   platform::Deadline deadline) {
  openSideChannel(comm, bootstrap, contents.secret);
  const std::vector<bool> opened = openTransports(comm, deadline);
  const TopologyFileRead topoFile = readTopologyFile(comm);
  const InitDetails mine =
      detailsOf(comm, opened, topoFile, zeroCopyMin, deadline);
  checkInitCancelled("the rendezvous");
  std::vector<InitDetails> all;
  for (const auto& bytes : bootstrap.allGather(encodeDetails(mine)))
    all.push_back(decodeDetails(bytes));

  // Agree, and see the cluster alike: a bad MCL_TOPO_FILE fails every rank
  // alike, before anything is mapped.
  checkAgreement(comm, all, mine);
  comm.cluster = clusterOf(comm, topoFile, all);
  teachTransports(comm, opened, all);

  // Choose each pair's transport, then connect.
  comm.transports = chooseTransports(comm.devices, opened, comm.nranks,
                                     comm.settings.transport, comm.label(),
                                     oneHostName(comm));
  addPathsAndFindings(comm, comm.cluster);
  checkInitCancelled("the exchange of what each rank offers");
  connectSideChannel(comm, all, bootstrap, deadline);
  connectTransports(comm, opened, bootstrap, deadline);
  watchCables(comm);
  buildAlgoContext(comm, all, zeroCopyMin);
  logReady(comm);
  if (comm.settings.tuneProbe) probeLinkModel(comm);
}

// For a rank out of descriptors (EMFILE), how many one rank of this
// communicator holds while init runs; the process that runs the rendezvous
// root holds one per rank more until init ends. "" for other errors.
std::string descriptorNeeds(const mclComm& comm, const Error& e) {
  const std::string what = e.what();
  if (what.find(std::strerror(EMFILE)) == std::string::npos ||
      what.find("descriptors per rank during init") != std::string::npos)
    return "";  // not EMFILE, or said already (by the rank that ran out)
  return "; a communicator of " + std::to_string(comm.nranks) +
         " ranks holds about " +
         std::to_string(initDescriptorsPerRank(comm.nranks, false)) +
         " descriptors per rank during init (" +
         std::to_string(initDescriptorsPerRank(comm.nranks, true)) +
         " over TCP), plus one per rank in the process that made the "
         "unique id";
}

}  // namespace

void checkInitArguments(int nranks, const mclUniqueId& id, int rank) {
  if (nranks < 1 || static_cast<uint32_t>(nranks) > kMaxRanks)
    throw error(mclInvalidArgument, "nranks %d must be between 1 and %u",
                nranks, kMaxRanks);
  if (rank < 0 || rank >= nranks)
    throw error(mclInvalidArgument, "rank %d is out of range [0, %d)", rank,
                nranks);
  decodeUniqueId(id);
}

std::unique_ptr<mclComm> initComm(int nranks, const mclUniqueId& id, int rank,
                                  const mclConfig_t* config, int emuMac) {
  checkInitArguments(nranks, id, rank);
  return initComm(nranks, id, rank, loadSettings(config), emuMac);
}

std::unique_ptr<mclComm> initComm(int nranks, const mclUniqueId& id, int rank,
                                  const CommSettings& settings, int emuMac) {
  checkInitArguments(nranks, id, rank);
  const UniqueIdContents contents = decodeUniqueId(id);
  auto comm = std::make_unique<mclComm>();
  comm->rank = rank;
  comm->nranks = nranks;
  comm->secret = contents.secret;
  comm->emuMac = emuMac < 0 ? rank : emuMac;
  comm->settings = settings;
  comm->label();  // built now, before any other thread can see the comm
  warnUnknownEnvironment();
  removeLeftoverSegments();
  comm->peerBufferLimit = static_cast<uint64_t>(
      paramInt("MCL_PEER_BUFFER_LIMIT", 1 << 16, int64_t{1} << 40));
  const int64_t zeroCopyMin =
      paramInt("MCL_ZERO_COPY_MIN_BYTES", 0, int64_t{1} << 50);
  comm->devices = makeDevices(*comm, contents.secret);
  const auto deadline = platform::Clock::now() +
                        std::chrono::seconds(comm->settings.timeoutSeconds);

  // Join, then the rest.
  try {
    std::unique_ptr<BootstrapClient> bootstrap =
        joinRendezvous(*comm, contents, deadline);
    try {
      connectJoined(*comm, *bootstrap, contents, zeroCopyMin, deadline);
    } catch (...) {
      const Error e = asError(std::current_exception());
      // Another rank's failure, when it is why this one failed, wins.
      bootstrap->throwFailureArrivingWithin(std::chrono::milliseconds(200));
      // The others hear why (from the root) instead of "rank r left".
      bootstrap->abandon(e.code(), e.what() + descriptorNeeds(*comm, e));
      throw;
    }
  } catch (...) {
    const Error e = asError(std::current_exception());
    const std::string needs = descriptorNeeds(*comm, e);
    if (needs.empty()) throw;
    throw Error(e.code(), e.what() + needs);
  }
  return comm;
}

}  // namespace mcl
