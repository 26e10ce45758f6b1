#include "latency/latency_command.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <utility>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/agreement.h"
#include "common/join.h"
#include "common/link_probe.h"
#include "common/mcl_error.h"
#include "common/progress.h"
#include "common/run_metadata.h"
#include "common/sample_stats.h"
#include "latency/latency_report.h"

namespace mcl::perf {

namespace {

// A communicator of one transport, split off the job's: the transport's
// view of which pairs of (job) ranks it serves.
struct TransportComm {
  LatencyTransport info;
  mclComm_t comm = nullptr;
  std::vector<int> jobRankOf;    // this comm's rank -> the job's rank
  std::vector<int> localRankOf;  // the job's rank -> this comm's, or -1
  std::vector<std::vector<bool>> serves;  // [a][b], by job rank
};

// The host index of every rank, and the host names, from the job's
// topology (the same on every rank).
struct Hosts {
  std::vector<int> hostOf;
  std::vector<std::string> names;
};

Hosts hostsOf(mclComm_t comm, int rank, int nranks) {
  const nlohmann::json topo = nlohmann::json::parse(topologyJson(comm, rank));
  Hosts hosts;
  hosts.hostOf.assign(size_t(nranks), 0);
  for (const auto& host : topo.at("hosts")) {
    const int id = int(hosts.names.size());
    hosts.names.push_back(host.value("name", "host" + std::to_string(id)));
    for (const auto& r : host.at("ranks")) {
      const int jobRank = r.get<int>();
      if (jobRank >= 0 && jobRank < nranks) hosts.hostOf[size_t(jobRank)] = id;
    }
  }
  return hosts;
}

// Unasked (no --transport), RDMA is not tried where the library would
// refuse it anyway: ranks of one host, on hardware, share memory. Saying
// so here spares every rank a warning.
bool rdmaCannotServe(const Hosts& hosts, int nranks) {
  const char* provider = std::getenv("MCL_RDMA_PROVIDER");
  const bool emulated =
      provider != nullptr && std::strcmp(provider, "emu") == 0;
  return !emulated && nranks > 1 && hosts.names.size() == 1;
}

// Splits a communicator of `name` off the job's: per host for shm, over
// every rank otherwise. On failure (on any rank) every rank drops it.
TransportComm splitTransport(const Options& options, const std::string& name,
                             mclComm_t job, int rank, int nranks,
                             const Hosts& hosts) {
  TransportComm t;
  t.info.name = name;
  mclConfig_t config = configFor(options);
  config.transport = name.c_str();
  const int color = name == "shm" ? hosts.hostOf[size_t(rank)] : 0;
  std::string failure;
  const mclResult_t result = mclCommSplit(job, color, rank, &t.comm, &config);
  if (result != mclSuccess) {
    failure = mclGetLastError(nullptr);
    if (failure.empty()) failure = mclGetErrorString(result);
    t.comm = nullptr;
  }
  t.info.note = firstFailure(job, rank, nranks, failure);
  if (!t.info.note.empty()) {
    if (t.comm) mclCommAbort(t.comm);
    t.comm = nullptr;
    return t;
  }
  int size = 0;
  checkMcl(rank, "mclCommCount", mclCommCount(t.comm, &size), t.comm);
  t.jobRankOf.assign(size_t(size), -1);
  int32_t me = rank;
  checkMcl(rank, "mclAllGather",
           mclAllGather(&me, t.jobRankOf.data(), 1, mclInt32, t.comm, nullptr),
           t.comm);
  t.localRankOf.assign(size_t(nranks), -1);
  for (int i = 0; i < size; ++i)
    t.localRankOf[size_t(t.jobRankOf[size_t(i)])] = i;

  // The pairs it serves with its own transport (under rdma, ranks of one
  // Mac still share memory), merged over the job: a shm communicator sees
  // its own host only, and every rank must walk the same pairs.
  std::vector<int32_t> serves(size_t(nranks) * size_t(nranks), 0);
  int32_t emulated = 0;
  const nlohmann::json topo = nlohmann::json::parse(topologyJson(t.comm, rank));
  for (const auto& path : topo.at("paths")) {
    if (path.value("transport", "") != name) continue;
    const int a = t.jobRankOf.at(path.at("ranks").at(0).get<size_t>());
    const int b = t.jobRankOf.at(path.at("ranks").at(1).get<size_t>());
    serves[size_t(a) * size_t(nranks) + size_t(b)] = 1;
    serves[size_t(b) * size_t(nranks) + size_t(a)] = 1;
    emulated |= path.value("link_kind", "") == "emulated";
  }
  serves.push_back(emulated);
  checkMcl(rank, "mclAllReduce",
           mclAllReduce(serves.data(), serves.data(), serves.size(), mclInt32,
                        mclMax, job, nullptr),
           job);
  t.info.emulated = serves.back() != 0;
  t.serves.assign(size_t(nranks), std::vector<bool>(size_t(nranks), false));
  for (size_t a = 0; a < size_t(nranks); ++a)
    for (size_t b = 0; b < size_t(nranks); ++b)
      t.serves[a][b] = serves[a * size_t(nranks) + b] != 0;
  t.info.available = true;
  return t;
}

// Rank a sends, rank b sends it back; a times each round trip.
RoundTripStats pingPong(const TransportComm& t, int me, int a, int b,
                        size_t bytes, const Options& o, char* buffer) {
  const int peer = t.localRankOf[size_t(me == a ? b : a)];
  SampleSummary s;
  const ProbeResult r = roundTrips(t.comm, peer, me == a, bytes, o.iters,
                                   o.warmupIters, buffer, &s);
  if (!r.ok()) dieOnMclError(me, r.call, r.result, t.comm);
  RoundTripStats stats;
  if (me != a) return stats;
  stats.measured = true;
  stats.minUs = s.min;
  stats.medianUs = s.median;
  stats.p99Us = s.p99;
  stats.roundTrips = o.iters;
  return stats;
}

// Every (size, pair, transport) slot holds 4 doubles: measured, min,
// median, p99. The starting rank fills its slots; a sum gathers them.
constexpr size_t kSlot = 4;

void storeStats(std::vector<double>& slots, size_t index,
                const RoundTripStats& s) {
  if (!s.measured) return;
  double* slot = &slots[index * kSlot];
  slot[0] = double(s.roundTrips);
  slot[1] = s.minUs;
  slot[2] = s.medianUs;
  slot[3] = s.p99Us;
}

RoundTripStats loadStats(const std::vector<double>& slots, size_t index) {
  const double* slot = &slots[index * kSlot];
  RoundTripStats s;
  s.measured = slot[0] > 0;
  s.roundTrips = int64_t(slot[0]);
  s.minUs = slot[1];
  s.medianUs = slot[2];
  s.p99Us = slot[3];
  return s;
}

void barrier(mclComm_t comm, int rank) {
  checkMcl(rank, "mclBarrier", mclBarrier(comm, nullptr), comm);
}

bool writeReports(const Options& options, const LatencyTable& table,
                  int libraryVersion, const std::string& startTime) {
  bool ok = true;
  std::string error;
  if (!options.jsonPath.empty() &&
      !writeReportFile(options.jsonPath,
                       latencyJson(table, options, libraryVersion, startTime),
                       &error)) {
    std::fprintf(stderr, "mcl-perf: cannot write the JSON report %s\n",
                 error.c_str());
    ok = false;
  }
  if (!options.csvPath.empty() &&
      !writeReportFile(options.csvPath, latencyCsv(table), &error)) {
    std::fprintf(stderr, "mcl-perf: cannot write the CSV report %s\n",
                 error.c_str());
    ok = false;
  }
  return ok;
}

}  // namespace

int runLatencyRank(const Options& given, const RankSetup& givenSetup) {
  // --transport lists the transports to compare; the job's own
  // communicator (barriers, gathering the results) takes the default.
  Options options = given;
  options.transport.clear();
  RankSetup setup = givenSetup;
  const std::string startTime = timeNow();
  mclComm_t job = joinCommunicator(options, &setup);
  const int rank = setup.rank;
  const int nranks = setup.nranks;
  std::string error;
  if (!validateForRanks(given, nranks, &error)) {
    if (rank == 0) std::fprintf(stderr, "mcl-perf: %s\n", error.c_str());
    checkMcl(rank, "mclCommDestroy", mclCommDestroy(job), nullptr);
    return kExitUsage;
  }
  int libraryVersion = 0;
  checkMcl(rank, "mclGetVersion", mclGetVersion(&libraryVersion), job);
  const Hosts hosts = hostsOf(job, rank, nranks);

  // Every rank must make the same splits: skip RDMA only if all would.
  int32_t skipRdma = given.transport.empty() && rdmaCannotServe(hosts, nranks);
  checkMcl(
      rank, "mclAllReduce",
      mclAllReduce(&skipRdma, &skipRdma, 1, mclInt32, mclMin, job, nullptr),
      job);
  std::vector<TransportComm> transports;
  for (const std::string& name : latencyTransports(given)) {
    if (name == "rdma" && skipRdma != 0) {
      transports.emplace_back();
      transports.back().info.name = name;
      transports.back().info.note =
          "all " + std::to_string(nranks) + " ranks are on one host (" +
          hosts.names.front() +
          "): RDMA runs between Macs; MCL_RDMA_PROVIDER=emu runs the "
          "emulated fabric";
      continue;
    }
    transports.push_back(
        splitTransport(options, name, job, rank, nranks, hosts));
  }

  const std::vector<size_t> sizes = sizeList(options);
  // The message, sent and received in place.
  std::vector<char> buffer(std::max<size_t>(options.maxBytes, 1));
  std::vector<std::pair<int, int>> pairs;
  for (int a = 0; a < nranks; ++a)
    for (int b = a + 1; b < nranks; ++b) pairs.emplace_back(a, b);
  const size_t nt = transports.size();
  std::vector<double> slots(sizes.size() * pairs.size() * nt * kSlot, 0.0);
  Progress progress(rank == 0, "latency", sizes.size() * pairs.size());
  for (size_t s = 0; s < sizes.size(); ++s)
    for (size_t p = 0; p < pairs.size(); ++p) {
      const auto [a, b] = pairs[p];
      progress.step("ranks " + std::to_string(a) + " <-> " + std::to_string(b) +
                    ", " + std::to_string(sizes[s]) + " B");
      // The transports take turns going first, pair by pair.
      for (size_t k = 0; k < nt; ++k) {
        const size_t t = (p + k) % nt;
        const TransportComm& tc = transports[t];
        if (!tc.info.available || !tc.serves[size_t(a)][size_t(b)]) continue;
        if (rank == a || rank == b)
          storeStats(
              slots, (s * pairs.size() + p) * nt + t,
              pingPong(tc, rank, a, b, sizes[s], options, buffer.data()));
        barrier(job, rank);
      }
    }
  checkMcl(rank, "mclAllReduce",
           mclAllReduce(slots.data(), slots.data(), slots.size(), mclFloat64,
                        mclSum, job, nullptr),
           job);

  progress.clear();
  int code = kExitOk;
  if (rank == 0) {
    LatencyTable table;
    table.nranks = nranks;
    table.roundTrips = options.iters;
    table.warmup = options.warmupIters;
    for (const TransportComm& tc : transports) {
      table.transports.push_back(tc.info);
      if (tc.info.available && tc.info.note.empty()) {
        bool any = false;
        for (const auto& [a, b] : pairs) any |= tc.serves[size_t(a)][size_t(b)];
        if (!any) {
          table.transports.back().available = false;
          table.transports.back().note = tc.info.name == "shm"
                                             ? "no two ranks share a host"
                                             : "it serves no pair of ranks";
        }
      }
    }
    for (size_t s = 0; s < sizes.size(); ++s)
      for (size_t p = 0; p < pairs.size(); ++p) {
        LatencyRow row;
        row.rankA = pairs[p].first;
        row.rankB = pairs[p].second;
        row.hostA = hosts.names[size_t(hosts.hostOf[size_t(row.rankA)])];
        row.hostB = hosts.names[size_t(hosts.hostOf[size_t(row.rankB)])];
        row.bytes = sizes[s];
        for (size_t t = 0; t < nt; ++t)
          row.stats.push_back(
              loadStats(slots, (s * pairs.size() + p) * nt + t));
        table.rows.push_back(std::move(row));
      }
    printLatencyTable(table, stdout);
    bool anyMeasured = false;
    for (const LatencyTransport& t : table.transports)
      anyMeasured |= t.available;
    if (!anyMeasured) {
      std::fprintf(stderr,
                   "mcl-perf: latency: no transport could be measured\n");
      code = kExitFailure;
    }
    if (!writeReports(given, table, libraryVersion, startTime))
      code = kExitFailure;
  }
  for (TransportComm& tc : transports)
    if (tc.comm)
      checkMcl(rank, "mclCommDestroy", mclCommDestroy(tc.comm), nullptr);
  checkMcl(rank, "mclCommDestroy", mclCommDestroy(job), nullptr);
  return code;
}

}  // namespace mcl::perf
