#include "topology/file_checks.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "topology/finding_text.h"

namespace mcl::topology {

namespace {

// An end the file names matches a detected end by interface, else by
// Thunderbolt port; an end the file leaves blank matches any.
bool endMatches(const LinkEnd& f, const LinkEnd& d) {
  if (!f.interface.empty()) return f.interface == d.interface;
  if (f.receptacle > 0) return f.receptacle == d.receptacle;
  return true;
}

struct Pair {
  int a;
  int b;
  bool operator<(const Pair& o) const {
    return std::pair{a, b} < std::pair{o.a, o.b};
  }
};

// A file link with its ends put in detected host ids (lower first).
ClusterLink mapped(const ClusterLink& l, const std::vector<int>& hostMap) {
  ClusterLink m = l;
  m.a.host = hostMap[size_t(l.a.host)];
  m.b.host = hostMap[size_t(l.b.host)];
  if (m.a.host > m.b.host) std::swap(m.a, m.b);
  return m;
}

std::string ends(const ClusterLink& l) {
  std::string a = l.a.interface.empty() && l.a.receptacle > 0
                      ? "Thunderbolt " + std::to_string(l.a.receptacle)
                      : l.a.interface;
  std::string b = l.b.interface.empty() && l.b.receptacle > 0
                      ? "Thunderbolt " + std::to_string(l.b.receptacle)
                      : l.b.interface;
  return (a.empty() ? "?" : a) + "<->" + (b.empty() ? "?" : b);
}

bool detectedLinks(const Cluster& c, int host) {
  if (host < 0 || host >= int(c.hosts.size())) return false;
  const ClusterHost& h = c.hosts[size_t(host)];
  return h.hasInventory && !h.inventory.interfaces.empty();
}

}  // namespace

std::vector<Finding> compareWithDetection(const Cluster& file,
                                          const Cluster& detected,
                                          const std::string& setting,
                                          bool forced) {
  std::vector<Finding> out;
  std::vector<int> hostMap;
  for (const ClusterHost& h : file.hosts)
    hostMap.push_back(h.ranks.empty() ? -1
                                      : detected.hostOfRank(h.ranks.front()));
  std::map<Pair, std::vector<ClusterLink>> listed;
  std::map<Pair, std::vector<const ClusterLink*>> seen;
  for (const ClusterLink& l : file.links) {
    if (l.a.host < 0 || l.b.host < 0 || l.a.host >= int(hostMap.size()) ||
        l.b.host >= int(hostMap.size()))
      continue;
    ClusterLink m = mapped(l, hostMap);
    listed[{m.a.host, m.b.host}].push_back(m);
  }
  for (const ClusterLink& l : detected.links)
    seen[{l.a.host, l.b.host}].push_back(&l);
  std::map<Pair, bool> pairs;
  for (const auto& [p, v] : listed) pairs[p] = true;
  for (const auto& [p, v] : seen) pairs[p] = true;
  const std::string follows =
      forced ? "the file is forced (MCL_TOPO_FILE_FORCE=1), so "
             : "the job follows detection (MCL_TOPO_FILE_FORCE=1 follows "
               "the file), so ";
  const std::string fix =
      "Bring the file up to date (MCL_TOPO_DUMP_FILE writes what detection "
      "sees), or check the cable with `mcl-perf qualify`";
  for (const auto& [pair, unused] : pairs) {
    if (!detectedLinks(detected, pair.a) || !detectedLinks(detected, pair.b))
      continue;
    std::vector<ClusterLink> fileLinks = listed[pair];
    std::vector<const ClusterLink*> found = seen[pair];
    std::vector<bool> used(found.size(), false);
    std::vector<ClusterLink> missing;
    for (const ClusterLink& f : fileLinks) {
      bool matched = false;
      for (size_t i = 0; i < found.size() && !matched; ++i)
        if (!used[i] && endMatches(f.a, found[i]->a) &&
            endMatches(f.b, found[i]->b)) {
          used[i] = true;
          matched = true;
        }
      if (!matched) missing.push_back(f);
    }
    std::string sawText;
    for (const ClusterLink* d : found)
      sawText += (sawText.empty() ? "" : ", ") + ends(*d);
    std::string fileText;
    for (const ClusterLink& f : fileLinks)
      fileText += (fileText.empty() ? "" : ", ") + ends(f);
    const std::string between =
        hostLabel(detected, pair.a) + " and " + hostLabel(detected, pair.b);
    const std::string saw = "detection sees " +
                            (sawText.empty() ? "no cable" : sawText) +
                            " between them";
    const std::string says =
        "the file lists " + (fileText.empty() ? "no cable" : fileText);
    for (const ClusterLink& f : missing)
      out.push_back({forced ? "error" : "warning",
                     setting + " lists cable " + ends(f) + " between " +
                         between + ", which detection does not see",
                     saw + "; " + follows +
                         (forced ? "the job will try a cable that may not "
                                   "be there"
                                 : "the job does not use it"),
                     fix,
                     {pair.a, pair.b},
                     {{pair.a, pair.b}}});
    for (size_t i = 0; i < found.size(); ++i) {
      if (used[i]) continue;
      out.push_back(
          {"warning",
           "detection sees cable " + ends(*found[i]) + " between " + between +
               ", which " + setting + " does not list",
           says + "; " + follows +
               (forced ? "the cable stays unused" : "the job uses it"),
           fix,
           {pair.a, pair.b},
           {{pair.a, pair.b}}});
    }
  }
  return out;
}

}  // namespace mcl::topology
