#include "plan/cluster_figures.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace mcl::perf::plan {

namespace {

using nlohmann::json;

constexpr int kFormat = 1;

json curveJson(const CostCurve& c) {
  return json{{"bytes", c.bytes}, {"us", c.us}};
}

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw std::runtime_error(source + ": " + what);
}

double nonNegative(const json& j, const char* key, const std::string& source,
                   const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number() || it->get<double>() < 0)
    fail(source, where + " needs \"" + key + "\", a number >= 0");
  return it->get<double>();
}

CostCurve curveFrom(const json& j, const std::string& source,
                    const std::string& where) {
  CostCurve c;
  try {
    c.bytes = j.at("bytes").get<std::vector<double>>();
    c.us = j.at("us").get<std::vector<double>>();
  } catch (const json::exception&) {
    fail(source, where + " needs \"bytes\" and \"us\", lists of numbers");
  }
  for (double us : c.us)
    if (!(us >= 0)) fail(source, where + ": \"us\" holds times >= 0");
  if (c.bytes.empty() || c.bytes.size() != c.us.size())
    fail(source,
         where + ": \"bytes\" and \"us\" differ in length or are empty");
  for (size_t i = 1; i < c.bytes.size(); ++i)
    if (c.bytes[i] <= c.bytes[i - 1])
      fail(source, where + ": \"bytes\" must grow");
  return c;
}

}  // namespace

double CostCurve::at(double messageBytes) const {
  if (bytes.empty()) return 0;
  if (bytes.size() == 1) return us[0];
  // The segment the size falls in, or the first or last one beyond them.
  size_t i = 1;
  while (i + 1 < bytes.size() && messageBytes > bytes[i]) ++i;
  const double slope = (us[i] - us[i - 1]) / (bytes[i] - bytes[i - 1]);
  const double v = us[i - 1] + slope * (messageBytes - bytes[i - 1]);
  // Below the smallest size a message costs no less than the smallest.
  return messageBytes < bytes[0] ? us[0] : std::max(v, 0.0);
}

void putFastestFirst(std::vector<RankFigures>* ranks) {
  double fastest = 0;
  for (const RankFigures& f : *ranks)
    fastest = std::max(fastest, f.weightBytesPerSAlone);
  // Steps of 10% below the fastest.
  auto step = [fastest](const RankFigures& f) {
    return std::floor(std::log(fastest / f.weightBytesPerSAlone) /
                      std::log(1.1));
  };
  std::stable_sort(ranks->begin(), ranks->end(),
                   [&](const RankFigures& a, const RankFigures& b) {
                     if (a.onCable != b.onCable) return a.onCable;
                     return step(a) < step(b);
                   });
}

double weightRateIn(const RankFigures& r, int tp, int busy) {
  if (tp == 1) return r.weightBytesPerSAlone;
  if (static_cast<size_t>(tp) <= r.weightBytesPerSByTp.size() &&
      r.weightBytesPerSByTp[tp - 1] > 0)
    return r.weightBytesPerSByTp[tp - 1];
  if (r.ranksOnHost <= 1 || busy <= 1) return r.weightBytesPerSAlone;
  if (busy >= r.ranksOnHost) return r.weightBytesPerS;
  const double share = double(busy - 1) / double(r.ranksOnHost - 1);
  return r.weightBytesPerSAlone +
         share * (r.weightBytesPerS - r.weightBytesPerSAlone);
}

std::string figuresToJson(const ClusterFigures& f) {
  json ranks = json::array();
  for (const RankFigures& r : f.ranks)
    ranks.push_back({{"rank", r.rank},
                     {"host", r.host},
                     {"memory_bytes", r.memoryBytes},
                     {"free_bytes", r.freeBytes},
                     {"weight_bytes_per_s", r.weightBytesPerS},
                     {"weight_bytes_per_s_alone", r.weightBytesPerSAlone},
                     {"weight_bytes_per_s_by_tp", r.weightBytesPerSByTp},
                     {"ranks_on_host", r.ranksOnHost},
                     {"on_cable", r.onCable},
                     {"flops_per_s", r.flopsPerS},
                     {"rate_source", r.rateSource}});
  json allReduce = json::array();
  for (const CostCurve& c : f.allReduce) allReduce.push_back(curveJson(c));
  json doc{{"mcl_plan_cluster", kFormat},
           {"transport", f.transport},
           {"ranks", ranks},
           {"allreduce", allReduce},
           {"hop", curveJson(f.hop)}};
  return doc.dump(2) + "\n";
}

namespace {

ClusterFigures figuresFrom(const json& doc, const std::string& source) {
  ClusterFigures f;
  f.transport = doc.value("transport", "");
  if (!doc.contains("ranks") || !doc["ranks"].is_array() ||
      doc["ranks"].empty())
    fail(source, "\"ranks\" must be a list of at least one rank");
  const json& list = doc["ranks"];
  std::vector<bool> seen(list.size(), false);
  for (const json& r : list) {
    const std::string where =
        "entry " + std::to_string(f.ranks.size()) + " of \"ranks\"";
    if (!r.is_object()) fail(source, where + " is not an object");
    RankFigures rf;
    // The rank's own number (a saved cluster lists them fastest first).
    rf.rank = static_cast<int>(f.ranks.size());
    if (r.contains("rank")) {
      if (!r["rank"].is_number_integer() || r["rank"].get<int>() < 0 ||
          static_cast<size_t>(r["rank"].get<int>()) >= list.size() ||
          seen[r["rank"].get<size_t>()])
        fail(source, where + ": \"rank\" must be a rank number from 0 to " +
                         std::to_string(list.size() - 1) + ", each once");
      rf.rank = r["rank"].get<int>();
      seen[static_cast<size_t>(rf.rank)] = true;
    }
    rf.host = r.value("host", "");
    rf.memoryBytes = nonNegative(r, "memory_bytes", source, where);
    rf.freeBytes = nonNegative(r, "free_bytes", source, where);
    rf.weightBytesPerS = nonNegative(r, "weight_bytes_per_s", source, where);
    rf.weightBytesPerSAlone =
        r.contains("weight_bytes_per_s_alone")
            ? nonNegative(r, "weight_bytes_per_s_alone", source, where)
            : rf.weightBytesPerS;
    if (r.contains("weight_bytes_per_s_by_tp")) {
      const json& byTp = r["weight_bytes_per_s_by_tp"];
      if (!byTp.is_array())
        fail(source, where + ": \"weight_bytes_per_s_by_tp\" is no list");
      for (const json& v : byTp) {
        if (!v.is_number() || v.get<double>() < 0)
          fail(source,
               where + ": \"weight_bytes_per_s_by_tp\" holds numbers >= 0");
        rf.weightBytesPerSByTp.push_back(v.get<double>());
      }
    }
    if (r.contains("ranks_on_host")) {
      if (!r["ranks_on_host"].is_number_integer() ||
          r["ranks_on_host"].get<int>() < 1)
        fail(source, where + ": \"ranks_on_host\" must be a whole number >= 1");
      rf.ranksOnHost = r["ranks_on_host"].get<int>();
    }
    rf.onCable = r.value("on_cable", true);
    rf.flopsPerS = nonNegative(r, "flops_per_s", source, where);
    if (rf.weightBytesPerS <= 0 || rf.weightBytesPerSAlone <= 0 ||
        rf.flopsPerS <= 0)
      fail(source, where + ": the rates must be above 0");
    rf.rateSource = r.value("rate_source", "");
    f.ranks.push_back(rf);
  }
  const size_t n = f.ranks.size();
  if (n > 1) {
    if (!doc.contains("allreduce") || !doc["allreduce"].is_array() ||
        doc["allreduce"].size() != n - 1)
      fail(source, "\"allreduce\" must hold one curve per group size 2.." +
                       std::to_string(n));
    for (size_t t = 0; t + 1 < n; ++t)
      f.allReduce.push_back(
          curveFrom(doc["allreduce"][t], source,
                    "\"allreduce\" over " + std::to_string(t + 2) + " ranks"));
    if (!doc.contains("hop")) fail(source, "\"hop\" is missing");
    f.hop = curveFrom(doc["hop"], source, "\"hop\"");
  }
  return f;
}

}  // namespace

ClusterFigures figuresFromJson(const std::string& text,
                               const std::string& source) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    fail(source, std::string("not JSON: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("mcl_plan_cluster") ||
      doc["mcl_plan_cluster"] != kFormat)
    fail(source,
         "not a cluster saved by `mcl-perf plan --save` (no "
         "\"mcl_plan_cluster\": 1)");
  try {
    return figuresFrom(doc, source);
  } catch (const json::exception& e) {
    // A field of the wrong type that the checks above let through.
    fail(source, std::string("a field has the wrong type: ") + e.what());
  }
}

}  // namespace mcl::perf::plan
