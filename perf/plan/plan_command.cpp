#include "plan/plan_command.h"

#include <mcl/mcl.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <ratio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/join.h"
#include "common/mcl_error.h"
#include "common/sample_stats.h"
#include "plan/cluster_figures.h"
#include "plan/host_resources.h"
#include "plan/layouts.h"
#include "plan/model_shape.h"
#include "plan/plan_report.h"
#include "plan/weight_rate.h"

namespace mcl::perf {

namespace {

using Clock = std::chrono::steady_clock;

// The messages timed: from a decode step's (a few KiB) to a prefill
// chunk's (megabytes); other sizes are interpolated.
constexpr size_t kMessageBytes[] = {2 << 10, 16 << 10, 128 << 10, 1 << 20,
                                    8 << 20};
constexpr size_t kLargestMessage = 8 << 20;
// Calls per size: enough for a stable median, few enough for 15 s on 4
// ranks over TCP.
int callsFor(size_t bytes) { return bytes <= (128 << 10) ? 60 : 8; }
constexpr int kWarmupCalls = 3;

// Tensor-parallel groups whose rates are measured: up to 8 ranks (more
// take the rate of all the host's ranks at once).
constexpr int kMaxTpMeasured = 8;

// One rank's figures on the wire (mclAllGather of bytes).
struct RankWire {
  char host[64];
  char chip[64];
  double memoryBytes;
  double freeBytes;
  double weightBytesPerS;
  double weightBytesPerSAlone;
  double weightBytesPerSByTp[kMaxTpMeasured];
  double flopsPerS;
  int cores;
};

plan::PlanInputs inputsOf(const Options& o) {
  plan::PlanInputs in;
  in.bits = o.plan.bits;
  in.groupSize = o.plan.groupSize;
  in.context = o.plan.context;
  in.prompt = o.plan.prompt;
  in.batch = o.plan.batch;
  return in;
}

// What the communicator knows of its machines (mclCommGetTopology, the
// same text on every rank): which ranks share one (they share its memory,
// and its bandwidth when they decode at once), and, where some pair of
// hosts is cabled, which ranks are on no cable (every path of theirs to
// another host is the LAN or a routed path).
void applyTopology(const std::string& topology,
                   std::vector<plan::RankFigures>* ranks) {
  const nlohmann::json doc = nlohmann::json::parse(topology, nullptr, false);
  if (!doc.is_object()) return;
  const auto at = [&](const nlohmann::json& r) -> plan::RankFigures* {
    if (!r.is_number_integer()) return nullptr;
    const int i = r.get<int>();
    return i >= 0 && static_cast<size_t>(i) < ranks->size() ? &(*ranks)[i]
                                                            : nullptr;
  };
  for (const nlohmann::json& h : doc.value("hosts", nlohmann::json::array())) {
    const nlohmann::json members = h.value("ranks", nlohmann::json::array());
    for (const nlohmann::json& r : members)
      if (plan::RankFigures* f = at(r)) {
        f->ranksOnHost = std::max<int>(1, static_cast<int>(members.size()));
        if (h.contains("name") && h["name"].is_string())
          f->host = h["name"].get<std::string>();
      }
  }
  for (plan::RankFigures& f : *ranks) {
    f.memoryBytes /= f.ranksOnHost;
    f.freeBytes /= f.ranksOnHost;
    if (f.weightBytesPerSByTp.empty()) f.weightBytesPerS /= f.ranksOnHost;
  }
  std::vector<int> cabled(ranks->size(), 0);
  std::vector<int> uncabled(ranks->size(), 0);
  bool anyCable = false;
  for (const nlohmann::json& p : doc.value("paths", nlohmann::json::array())) {
    const std::string kind = p.value("link_kind", "");
    const bool cable = kind == "cable" || kind == "emulated";
    if (!cable && kind != "lan" && kind != "routed") continue;  // one host
    anyCable |= cable;
    for (const nlohmann::json& r : p.value("ranks", nlohmann::json::array()))
      if (const plan::RankFigures* f = at(r))
        (cable ? cabled : uncabled)[static_cast<size_t>(f->rank)]++;
  }
  if (!anyCable) return;  // a cluster on its LAN alone: nothing to refuse
  for (plan::RankFigures& f : *ranks)
    f.onCable = cabled[static_cast<size_t>(f.rank)] > 0 ||
                uncabled[static_cast<size_t>(f.rank)] == 0;
}

// --mem-bw and --tflops, on rank 0 (or --from): the same for every rank
// whatever each rank's own command line said.
void applyRateFlags(const Options& o, plan::ClusterFigures* cluster) {
  for (plan::RankFigures& f : cluster->ranks) {
    if (o.plan.memBwGBps > 0) {
      f.weightBytesPerSAlone = o.plan.memBwGBps * 1e9;
      f.weightBytesPerS = f.weightBytesPerSAlone / f.ranksOnHost;
      f.weightBytesPerSByTp.clear();
      f.rateSource = "--mem-bw";
    }
    if (o.plan.tflops > 0) f.flopsPerS = o.plan.tflops * 1e12;
  }
}

// Prints the plan (rank 0 or --from): mcl-perf's exit status.
int printPlan(const Options& o, const plan::ClusterFigures& cluster) {
  plan::ModelShape model;
  try {
    model = plan::loadModel(o.plan.model);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mcl-perf plan: %s\n", e.what());
    return kExitUsage;
  }
  const plan::PlanInputs in = inputsOf(o);
  plan::ClusterFigures ordered = cluster;
  applyRateFlags(o, &ordered);
  plan::putFastestFirst(&ordered.ranks);  // a saved file may come unordered
  const std::vector<plan::Layout> layouts =
      plan::planLayouts(model, ordered, in);
  const std::string text = o.plan.json
                               ? plan::planJson(model, ordered, in, layouts)
                               : plan::planTable(model, ordered, in, layouts);
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}

// The figures of every rank, in planning order: the fastest decoders
// first (those within 10% of the fastest keep their rank order, so noise
// does not reorder alike Macs).
std::vector<plan::RankFigures> gatherRanks(const Options& o, mclComm_t comm,
                                           int rank, int nranks) {
  const plan::HostResources host = plan::readHostResources();
  RankWire mine{};
  const plan::ModelShape model = plan::loadModel(o.plan.model);
  // Alone, each rank in turn, over the whole model's matrices (one rank,
  // pipeline stages); then every rank at once, over its share of them in
  // each tensor-parallel group size.
  for (int r = 0; r < nranks; ++r) {
    checkMcl(rank, "mclBarrier", mclBarrier(comm, nullptr), comm);
    if (r == rank)
      mine.weightBytesPerSAlone =
          plan::measureWeightRate(plan::decodeMatrices(model, 1));
  }
  for (int t = 1; t <= std::min(nranks, kMaxTpMeasured); ++t) {
    checkMcl(rank, "mclBarrier", mclBarrier(comm, nullptr), comm);
    mine.weightBytesPerSByTp[t - 1] =
        plan::measureWeightRate(plan::decodeMatrices(model, t));
  }
  mine.weightBytesPerS = mine.weightBytesPerSByTp[0];
  mine.flopsPerS = plan::measureFlopsRate();
  std::snprintf(mine.host, sizeof mine.host, "%s", host.host.c_str());
  std::snprintf(mine.chip, sizeof mine.chip, "%s", host.chip.c_str());
  mine.memoryBytes = host.memoryBytes;
  mine.freeBytes = host.freeBytes;
  mine.cores = host.cores;
  std::vector<RankWire> all(static_cast<size_t>(nranks));
  checkMcl(
      rank, "mclAllGather",
      mclAllGather(&mine, all.data(), sizeof mine, mclUint8, comm, nullptr),
      comm);
  std::vector<plan::RankFigures> ranks;
  for (int r = 0; r < nranks; ++r) {
    const RankWire& w = all[r];
    plan::RankFigures f;
    f.rank = r;
    f.host = std::string(w.host, strnlen(w.host, sizeof w.host));
    f.memoryBytes = w.memoryBytes;
    f.freeBytes = w.freeBytes;
    f.weightBytesPerS = w.weightBytesPerS;
    f.weightBytesPerSAlone = w.weightBytesPerSAlone;
    f.weightBytesPerSByTp.assign(
        w.weightBytesPerSByTp,
        w.weightBytesPerSByTp + std::min(nranks, kMaxTpMeasured));
    f.flopsPerS = w.flopsPerS;
    f.rateSource = "measured";
    const std::string chip(w.chip, strnlen(w.chip, sizeof w.chip));
    if (const double quoted = plan::quotedMemoryBandwidth(chip, w.cores);
        quoted > 0) {
      f.weightBytesPerSAlone = quoted;
      f.weightBytesPerS = quoted;
      f.weightBytesPerSByTp.clear();
      f.rateSource = "quoted: " + chip;
    }
    ranks.push_back(f);
  }
  // Every rank reads the same topology: the order below is the same on all.
  applyTopology(topologyJson(comm, rank), &ranks);
  plan::putFastestFirst(&ranks);
  return ranks;
}

// The curve of kMessageBytes from the times one rank measured (the others
// give zeros), summed over the ranks so that every rank has it.
plan::CostCurve curveOnEveryRank(mclComm_t comm, int rank,
                                 std::vector<double>& us) {
  checkMcl(rank, "mclAllReduce",
           mclAllReduce(us.data(), us.data(), us.size(), mclFloat64, mclSum,
                        comm, nullptr),
           comm);
  plan::CostCurve curve;
  for (size_t i = 0; i < us.size(); ++i) {
    curve.bytes.push_back(double(kMessageBytes[i]));
    curve.us.push_back(us[i]);
  }
  return curve;
}

// Median microseconds of an all-reduce of each size over the first t ranks
// in planning order (position < t); the others wait. Every rank returns
// the same curve.
plan::CostCurve measureAllReduce(mclComm_t comm, int rank, int position, int t,
                                 std::vector<char>& buffer) {
  mclComm_t group = nullptr;
  checkMcl(rank, "mclCommSplit",
           mclCommSplit(comm, position < t ? 0 : MCL_SPLIT_NOCOLOR, position,
                        &group, nullptr),
           comm);
  std::vector<double> us(std::size(kMessageBytes), 0.0);
  if (group != nullptr) {
    for (size_t i = 0; i < std::size(kMessageBytes); ++i) {
      const size_t count = kMessageBytes[i] / 2;
      std::vector<double> calls;
      for (int k = 0; k < kWarmupCalls + callsFor(kMessageBytes[i]); ++k) {
        const Clock::time_point start = Clock::now();
        checkMcl(rank, "mclAllReduce",
                 mclAllReduce(buffer.data(), buffer.data(), count, mclBfloat16,
                              mclSum, group, nullptr),
                 group);
        const std::chrono::duration<double, std::micro> took =
            Clock::now() - start;
        if (k >= kWarmupCalls) calls.push_back(took.count());
      }
      us[i] = summarize(calls).median;
    }
    checkMcl(rank, "mclCommDestroy", mclCommDestroy(group), nullptr);
  }
  // The group's first rank speaks for it.
  if (position != 0) std::fill(us.begin(), us.end(), 0.0);
  return curveOnEveryRank(comm, rank, us);
}

// Half the median round trip of each size between the first two ranks in
// planning order: one pipeline hop.
plan::CostCurve measureHop(mclComm_t comm, int rank, int position,
                           const std::vector<plan::RankFigures>& order,
                           std::vector<char>& buffer) {
  std::vector<double> us(std::size(kMessageBytes), 0.0);
  if (position < 2) {
    const int peer = order[1 - position].rank;
    for (size_t i = 0; i < std::size(kMessageBytes); ++i) {
      const size_t bytes = kMessageBytes[i];
      std::vector<double> trips;
      for (int k = 0; k < kWarmupCalls + callsFor(bytes); ++k) {
        const Clock::time_point start = Clock::now();
        if (position == 0) {
          checkMcl(rank, "mclSend",
                   mclSend(buffer.data(), bytes, mclUint8, peer, comm, nullptr),
                   comm);
          checkMcl(rank, "mclRecv",
                   mclRecv(buffer.data(), bytes, mclUint8, peer, comm, nullptr),
                   comm);
        } else {
          checkMcl(rank, "mclRecv",
                   mclRecv(buffer.data(), bytes, mclUint8, peer, comm, nullptr),
                   comm);
          checkMcl(rank, "mclSend",
                   mclSend(buffer.data(), bytes, mclUint8, peer, comm, nullptr),
                   comm);
        }
        const std::chrono::duration<double, std::micro> took =
            Clock::now() - start;
        if (k >= kWarmupCalls) trips.push_back(took.count());
      }
      us[i] = position == 0 ? summarize(trips).median / 2 : 0;
    }
  }
  return curveOnEveryRank(comm, rank, us);
}

bool saveFigures(const std::string& path, const plan::ClusterFigures& f) {
  std::ofstream out(path);
  out << plan::figuresToJson(f);
  out.close();
  if (out) return true;
  std::fprintf(stderr, "mcl-perf plan: cannot write --save %s: %s\n",
               path.c_str(), std::strerror(errno));
  return false;
}

}  // namespace

int runPlanRank(const Options& options, const RankSetup& given) {
  RankSetup setup = given;
  mclComm_t comm = joinCommunicator(options, &setup);
  const int rank = setup.rank;
  const int nranks = setup.nranks;
  plan::ClusterFigures cluster;
  cluster.transport = transportsOfRank(comm, rank, transportName(options));
  cluster.ranks = gatherRanks(options, comm, rank, nranks);
  int position = 0;
  for (int i = 0; i < nranks; ++i)
    if (cluster.ranks[i].rank == rank) position = i;
  std::vector<char> buffer(kLargestMessage, 0);
  for (int t = 2; t <= nranks; ++t)
    cluster.allReduce.push_back(
        measureAllReduce(comm, rank, position, t, buffer));
  if (nranks > 1)
    cluster.hop = measureHop(comm, rank, position, cluster.ranks, buffer);
  checkMcl(rank, "mclCommDestroy", mclCommDestroy(comm), nullptr);
  if (rank != 0) return kExitOk;
  if (!options.plan.savePath.empty() &&
      !saveFigures(options.plan.savePath, cluster))
    return kExitFailure;
  return printPlan(options, cluster);
}

int runPlanFromFile(const Options& options) {
  std::ifstream file(options.plan.fromPath);
  if (!file) {
    std::fprintf(stderr, "mcl-perf plan: cannot read --from %s: %s\n",
                 options.plan.fromPath.c_str(), std::strerror(errno));
    return kExitUsage;
  }
  std::stringstream text;
  text << file.rdbuf();
  plan::ClusterFigures cluster;
  try {
    cluster = plan::figuresFromJson(text.str(), options.plan.fromPath);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mcl-perf plan: %s\n", e.what());
    return kExitUsage;
  }
  return printPlan(options, cluster);
}

}  // namespace mcl::perf
