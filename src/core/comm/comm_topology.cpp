#include "core/comm/comm_topology.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <sodium.h>

#include "base/error.h"
#include "base/log.h"
#include "core/comm/comm.h"
#include "core/params/params.h"
#include "core/registry/transport_registry.h"
#include "topology/cluster_json.h"
#include "topology/file_checks.h"
#include "topology/findings.h"

namespace mcl {

namespace {

// Hosts in order of their lowest rank, with their ranks (ascending, so
// hosts[h].front() is host h's lowest rank).
std::vector<std::vector<int>> ranksByHost(const mclComm& comm) {
  std::vector<std::vector<int>> hosts;
  std::vector<std::string> ids;
  for (int r = 0; r < comm.nranks; ++r) {
    const std::string& id = comm.peers[size_t(r)].hostId;
    size_t h = 0;
    while (h < ids.size() && ids[h] != id) ++h;
    if (h == ids.size()) {
      ids.push_back(id);
      hosts.emplace_back();
    }
    hosts[h].push_back(r);
  }
  return hosts;
}

std::string readFile(const std::string& var, const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw error(mclInvalidArgument, "%s=%s: cannot open: %s", var.c_str(),
                path.c_str(), strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The file must describe this job: as many ranks, and ranks that share a
// host here share one in the file (and the other way round).
void checkFileFitsJob(const mclComm& comm, const topology::Cluster& file,
                      const std::string& path) {
  size_t ranks = 0;
  for (const auto& h : file.hosts) ranks += h.ranks.size();
  if (ranks != size_t(comm.nranks))
    throw error(mclInvalidUsage,
                "%s=%s describes %zu ranks, this communicator has "
                "%d",
                comm.settings.topoFileVar.c_str(), path.c_str(), ranks,
                comm.nranks);
  for (int a = 0; a < comm.nranks; ++a)
    for (int b = a + 1; b < comm.nranks; ++b) {
      bool here = comm.peers[size_t(a)].hostId == comm.peers[size_t(b)].hostId;
      bool there = file.hostOfRank(a) == file.hostOfRank(b);
      if (here != there)
        throw error(mclInvalidUsage,
                    "%s=%s puts ranks %d and %d on %s, but they run "
                    "on %s (%s and %s)",
                    comm.settings.topoFileVar.c_str(), path.c_str(), a, b,
                    there ? "one host" : "two hosts",
                    here ? "one host" : "two hosts",
                    comm.peers[size_t(a)].hostName.c_str(),
                    comm.peers[size_t(b)].hostName.c_str());
    }
}

}  // namespace

std::string localInventory(const mclComm& comm, platform::Deadline deadline) {
  std::vector<std::vector<int>> hosts = ranksByHost(comm);
  bool lowest = false;
  for (const auto& h : hosts) lowest |= h.front() == comm.rank;
  if (!lowest) return "";
  // With a file too: what detection sees is checked against it.
  bool links = hosts.size() > 1 || comm.settings.topoDetectAlways ||
               !comm.settings.topoDumpFile.empty();
  return topology::inventoryToJson(topology::detectInventory(links, deadline))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

TopologyFileRead readTopologyFile(const mclComm& comm) {
  TopologyFileRead read;
  const std::string& path = comm.settings.topoFile;
  if (path.empty()) return read;
  try {
    std::string text = readFile(comm.settings.topoFileVar, path);
    read.cluster = topology::clusterFromText(text, path);
    unsigned char digest[16];
    crypto_generichash(digest, sizeof(digest),
                       reinterpret_cast<const unsigned char*>(text.data()),
                       text.size(), nullptr, 0);
    read.status = "digest ";
    for (unsigned char b : digest) {
      char hex[3];
      snprintf(hex, sizeof(hex), "%02x", b);
      read.status += hex;
    }
  } catch (const Error& e) {
    read.status = std::string("error ") + e.what();
  }
  return read;
}

topology::Cluster buildCommCluster(
    const mclComm& comm, const TopologyFileRead& file,
    const std::vector<std::string>& fileStatus,
    const std::vector<std::string>& inventories) {
  std::vector<std::vector<int>> hosts = ranksByHost(comm);
  topology::Cluster cluster;
  const std::string& path = comm.settings.topoFile;
  // Same verdict on every rank: the first rank that could not read its
  // file, else the first whose file differs from rank 0's.
  for (size_t r = 0; r < fileStatus.size(); ++r)
    if (fileStatus[r].rfind("error ", 0) == 0)
      throw error(mclInvalidArgument, "rank %zu: %s", r,
                  fileStatus[r].substr(6).c_str());
  for (size_t r = 1; r < fileStatus.size(); ++r)
    if (fileStatus[r] != fileStatus[0])
      throw error(mclInvalidUsage,
                  "rank %zu %s MCL_TOPO_FILE than rank 0: every rank must "
                  "read the same file (or none)",
                  r,
                  fileStatus[r].empty()   ? "has no"
                  : fileStatus[0].empty() ? "has an"
                                          : "reads a different");
  std::vector<topology::HostInventory> inv;
  for (const auto& host : hosts) {
    int r = host.front();
    const std::string& text = inventories[size_t(r)];
    try {
      inv.push_back(topology::inventoryFromJson(
          nlohmann::json::parse(text.begin(), text.end())));
    } catch (const std::exception& e) {
      throw error(mclRemoteError,
                  "%s: rank %d sent an unreadable host inventory: %s",
                  comm.label().c_str(), r, e.what());
    }
  }
  cluster = topology::buildCluster(inv, hosts);
  if (!file.cluster || file.cluster->links.empty()) {
    if (file.cluster) {  // a hostfile: ranks and hosts, no cables
      checkFileFitsJob(comm, *file.cluster, path);
      cluster.source = "detected; " + comm.settings.topoFileVar + "=" + path +
                       " names no cables";
    }
    return cluster;
  }
  // The file names cables: where detection sees others, say so, and
  // follow detection unless the file is forced.
  checkFileFitsJob(comm, *file.cluster, path);
  const std::string setting = comm.settings.topoFileVar + "=" + path;
  const bool forced = comm.settings.topoFileForce;
  std::vector<topology::Finding> differences =
      topology::compareWithDetection(*file.cluster, cluster, setting, forced);
  if (differences.empty() || forced) {
    topology::Cluster fromFile = *file.cluster;
    fromFile.findings = differences;
    return fromFile;
  }
  cluster.source = "detected; " + setting +
                   " contradicts it (MCL_TOPO_FILE_FORCE=1 follows the file)";
  cluster.findings = differences;
  return cluster;
}

int initDescriptorsPerRank(int nranks, bool tcp) {
  const int peers = nranks - 1;
  // The rendezvous connection, the side channel's listener, a wake pipe
  // and a socket per peer; over TCP a listener and 2 x MCL_TCP_NSOCKS
  // (2) sockets per peer.
  return 4 + peers + (tcp ? 1 + 4 * peers : 0);
}

void addPathsAndFindings(const mclComm& comm, topology::Cluster& cluster) {
  bool rdmaUsed = false;
  bool tcpUsed = false;
  for (int a = 0; a < comm.nranks; ++a)
    for (int b = a + 1; b < comm.nranks; ++b) {
      const transport::Device& device =
          *comm.devices[size_t(comm.transports.deviceOf(a, b))];
      topology::RankPath p;
      p.a = a;
      p.b = b;
      p.transport = device.name();
      device.describePath(a, b, p);
      for (const TransportFallback& f : comm.transports.fallbacks())
        if (f.a == a && f.b == b) p.note = f.from + " not used: " + f.why;
      if (const int s = comm.transports.standbyOf(a, b); s >= 0) {
        topology::RankPath beside;
        comm.devices[size_t(s)]->describePath(a, b, beside);
        p.standby = std::string(comm.devices[size_t(s)]->name()) + " " +
                    beside.linkKind;
        for (const std::string& l : beside.links) p.standby += " " + l;
      }
      rdmaUsed |= device.linkKind() == transport::LinkKind::Rdma;
      tcpUsed |= device.linkKind() == transport::LinkKind::Socket;
      cluster.paths.push_back(p);
    }
  // RDMA in use on real hardware: its prerequisites become errors.
  topology::CheckOptions checks;
  checks.rdmaWanted = rdmaUsed;
  // The shared memory the transports take on a host (the rings), from
  // their registry entries: core names no concrete transport.
  std::vector<uint64_t (*)(int, const ParamSource&)> sharedBytes;
  for (const TransportEntry& t : transportRegistry())
    if (t.hostSharedBytes != nullptr) sharedBytes.push_back(t.hostSharedBytes);
  checks.hostNeeds.ringBytes = [sharedBytes](int ranks) {
    uint64_t bytes = 0;
    for (const auto& need : sharedBytes)
      bytes += need(ranks, environmentParams());
    return bytes;
  };
  checks.hostNeeds.descriptorsPerRank =
      initDescriptorsPerRank(comm.nranks, tcpUsed);
  topology::addFindings(cluster, checks);
}

void refreshOwnPaths(const mclComm& comm, topology::Cluster& cluster) {
  for (topology::RankPath& p : cluster.paths) {
    if (p.a != comm.rank && p.b != comm.rank) continue;
    p.linkKind.clear();
    p.links.clear();
    comm.devices[size_t(comm.transports.deviceOf(p.a, p.b))]->describePath(
        p.a, p.b, p);
  }
}

void reportCluster(const mclComm& comm, const topology::Cluster& cluster) {
  if (comm.rank != 0) return;
  MCL_LOG(Info, kLogTopo, "%s: %zu host(s), %zu cable(s), shape %s (%s)",
          comm.label().c_str(), cluster.hosts.size(), cluster.links.size(),
          cluster.shape.c_str(), cluster.source.c_str());
  // A warning once per process: an application that makes many
  // communicators (splits) on the same hosts hears it once, not per split.
  static std::mutex warnedMutex;
  static std::set<std::string> warned;
  for (const topology::Finding& f : cluster.findings) {
    bool repeat = false;
    if (f.severity != "info") {
      std::lock_guard<std::mutex> lock(warnedMutex);
      repeat = !warned.insert(f.what).second;
    }
    if (f.severity == "info" || repeat)
      MCL_LOG(Info, kLogTopo, "%s: %s: %s. Fix: %s", comm.label().c_str(),
              f.what.c_str(), f.why.c_str(), f.fix.c_str());
    else
      MCL_LOG(Warn, kLogTopo, "%s: topology %s: %s: %s. Fix: %s",
              comm.label().c_str(), f.severity.c_str(), f.what.c_str(),
              f.why.c_str(), f.fix.c_str());
  }
  const std::string& dump = comm.settings.topoDumpFile;
  if (dump.empty()) return;
  std::ofstream out(dump);
  out << topology::clusterToJson(cluster).dump(
             2, ' ', false, nlohmann::json::error_handler_t::replace)
      << "\n";
  out.close();
  if (!out)
    throw error(mclSystemError, "MCL_TOPO_DUMP_FILE=%s: cannot write: %s",
                dump.c_str(), strerror(errno));
  MCL_LOG(Info, kLogTopo, "%s: topology written to %s", comm.label().c_str(),
          dump.c_str());
}

}  // namespace mcl
