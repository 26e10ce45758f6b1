#include "bench/cluster_verdict.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "bench/topology_errors.h"
#include "common/text_format.h"

namespace mcl::perf {

namespace {

// The slowest cable: measured when qualified (a dead one first), else by
// nominal rate.
std::string slowestCable(const QualifyPlan& plan,
                         const QualifyResults* qualified) {
  if (qualified != nullptr && qualified->cables.size() == plan.cables.size()) {
    int slowest = -1;
    double rate = 0;
    for (size_t i = 0; i < plan.cables.size(); ++i) {
      const CableMeasurement& m = qualified->cables[i];
      const double r = m.dead ? 0 : std::min(m.gbpsAtoB, m.gbpsBtoA);
      if (slowest < 0 || r < rate) {
        slowest = int(i);
        rate = r;
      }
    }
    if (slowest < 0) return "";
    const CableMeasurement& m = qualified->cables[size_t(slowest)];
    return "slowest cable " + plan.cables[size_t(slowest)].name() +
           (m.dead ? " (DEAD)"
                   : formatText(" (%.3g GB/s one way, measured; ", rate) +
                         verdictName(m.verdict) + ")");
  }
  for (const CableUnderTest& c : plan.cables)
    if (!c.deadAtDetection.empty())
      return "cable " + c.name() +
             " answers nothing (DEAD; --qualify says why)";
  int slowest = -1;
  for (size_t i = 0; i < plan.cables.size(); ++i)
    if (slowest < 0 ||
        plan.cables[i].nominalGbps < plan.cables[size_t(slowest)].nominalGbps)
      slowest = int(i);
  if (slowest < 0) return "";
  const CableUnderTest& c = plan.cables[size_t(slowest)];
  return "slowest cable " + c.name() +
         (c.nominalGbps > 0 ? formatText(" (%g Gb/s nominal", c.nominalGbps)
                            : std::string(" (rate unknown")) +
         "; --qualify measures each)";
}

}  // namespace

std::string clusterVerdict(const nlohmann::json& topology, int nranks,
                           double peakBusBw, const QualifyResults* qualified) {
  std::string transport = "tcp";
  for (const auto& path : topology.at("paths"))
    if (path.value("transport", "") == "rdma") transport = "rdma";
  QualifyPlan plan;
  std::string error;
  if (qualified != nullptr)
    plan = qualified->plan;  // its measurements go with its own cables
  else if (!planQualification(topology, nranks, transport, &plan, &error))
    return "# Cluster: cannot read the cabling: " + error;
  if (plan.macs.size() < 2 && !plan.emulated) return "";
  std::string line = formatText("# Cluster: peak busbw %.3g GB/s", peakBusBw) +
                     (plan.emulated ? " (EMULATED fabric)" : "");
  bool anyAnswers = false;
  for (const CableUnderTest& c : plan.cables)
    anyAnswers |= c.deadAtDetection.empty();
  const std::string slow = slowPathsText(topology);
  if (!anyAnswers)
    return line + "; no cables detected between the hosts: traffic takes " +
           (slow.empty() ? "the network" : slow) +
           " (mcl-perf topo --check says why)";
  // A ring all-reduce moves at the pace of its slowest hop: the pair of
  // hosts whose cables (all of them, striped) carry the least.
  std::map<std::pair<int, int>, double> pairGbps;
  bool unknown = false;
  for (const CableUnderTest& c : plan.cables) {
    if (!c.deadAtDetection.empty()) continue;
    pairGbps[{c.a.host, c.b.host}] += c.nominalGbps;
    unknown |= c.nominalGbps <= 0;
  }
  std::pair<int, int> slowestPair = pairGbps.begin()->first;
  for (const auto& [pair, gbps] : pairGbps)
    if (gbps < pairGbps[slowestPair]) slowestPair = pair;
  if (unknown) {
    line += "; the cables' nominal rate is unknown";
  } else {
    const double allowed = pairGbps[slowestPair] / 8;
    std::string names;
    for (const CableUnderTest& c : plan.cables)
      if (std::pair{c.a.host, c.b.host} == slowestPair)
        names = c.a.hostName + " <-> " + c.b.hostName;
    line += formatText(", %.0f%% of the %.3g GB/s", 100 * peakBusBw / allowed,
                       allowed) +
            " the slowest pair's cables allow (" + names +
            formatText(", %g Gb/s)", pairGbps[slowestPair]);
  }
  const std::string slowest = slowestCable(plan, qualified);
  if (!slowest.empty()) line += "; " + slowest;
  // Cables init left out (they carried nothing) are still in the cabling
  // above: say so, or the figure blames the cables that work.
  const uint64_t leftOut =
      topology.value("link_watch", nlohmann::json::object())
          .value("left_out_at_init", uint64_t{0});
  if (leftOut > 0)
    line += formatText(
        "; %llu of this rank's cables left out at init (they carried "
        "nothing: see the WARN), counted above all the same",
        static_cast<unsigned long long>(leftOut));
  // Pairs whose traffic left the cables set the pace whatever the cables
  // allow: name them.
  if (!slow.empty())
    line += "; SLOW PATH " + slow + " (mcl-perf topo --check says why)";
  return line;
}

}  // namespace mcl::perf
