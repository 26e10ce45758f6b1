#include "bench/topology_errors.h"

#include <set>
#include <string>
#include <utility>

namespace mcl::perf {

namespace {

int hostOfRank(const nlohmann::json& topology, int rank) {
  for (const auto& host : topology.value("hosts", nlohmann::json::array()))
    for (const auto& r : host.value("ranks", nlohmann::json::array()))
      if (r.is_number_integer() && r.get<int>() == rank)
        return host.value("id", -1);
  return -1;
}

std::string hostText(const nlohmann::json& topology, int id) {
  for (const auto& host : topology.value("hosts", nlohmann::json::array()))
    if (host.value("id", -1) == id)
      return "host " + std::to_string(id) + " (" + host.value("name", "?") +
             ")";
  return "host " + std::to_string(id);
}

}  // namespace

std::string topologyErrorLines(const nlohmann::json& topology) {
  std::string lines;
  int errors = 0;
  for (const auto& f : topology.value("findings", nlohmann::json::array())) {
    if (f.value("severity", "") != "error") continue;
    ++errors;
    lines += "#  ERROR " + f.value("what", "") +
             "\n#        fix: " + f.value("fix", "") + "\n";
  }
  if (errors == 0) return "";
  return "# Topology: " + std::to_string(errors) + " error" +
         (errors == 1 ? "" : "s") +
         " in the cabling (mcl-perf topo --check explains each)\n" + lines;
}

std::string slowPathsText(const nlohmann::json& topology) {
  std::set<std::pair<int, int>> seen;
  std::string text;
  for (const auto& p : topology.value("paths", nlohmann::json::array())) {
    const std::string kind = p.value("link_kind", "");
    if (p.value("transport", "") != "tcp" || kind == "cable" ||
        kind == "loopback" || !p.contains("ranks") || p["ranks"].size() != 2)
      continue;
    int a = hostOfRank(topology, p["ranks"][0].get<int>());
    int b = hostOfRank(topology, p["ranks"][1].get<int>());
    if (a == b || a < 0 || b < 0) continue;
    if (a > b) std::swap(a, b);
    if (!seen.insert({a, b}).second) continue;
    std::string via;
    for (const auto& l : p.value("links", nlohmann::json::array()))
      if (l.is_string())
        via += (via.empty() ? "" : ", ") + l.get<std::string>();
    text += (text.empty() ? "" : "; ") + hostText(topology, a) + " <-> " +
            hostText(topology, b) + " over " + kind +
            (via.empty() ? "" : " " + via);
  }
  return text;
}

}  // namespace mcl::perf
