// Naming the shape of the cabling, from the graph of hosts joined by at least
// one cable (how many cables a pair has does not change the shape).
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "topology/cluster.h"

namespace mcl::topology {

namespace {

struct Graph {
  int n = 0;
  std::vector<std::set<int>> neighbours;
  int edges = 0;
};

Graph cableGraph(const Cluster& c) {
  Graph g;
  g.n = static_cast<int>(c.hosts.size());
  g.neighbours.resize(static_cast<size_t>(g.n));
  for (const ClusterLink& l : c.links) {
    if (l.a.host < 0 || l.b.host < 0 || l.a.host >= g.n || l.b.host >= g.n ||
        l.a.host == l.b.host)
      continue;
    if (g.neighbours[static_cast<size_t>(l.a.host)].insert(l.b.host).second) {
      g.neighbours[static_cast<size_t>(l.b.host)].insert(l.a.host);
      ++g.edges;
    }
  }
  return g;
}

bool connected(const Graph& g) {
  std::vector<bool> seen(static_cast<size_t>(g.n), false);
  std::vector<int> frontier = {0};
  seen[0] = true;
  int count = 1;
  while (!frontier.empty()) {
    int h = frontier.back();
    frontier.pop_back();
    for (int next : g.neighbours[static_cast<size_t>(h)])
      if (!seen[static_cast<size_t>(next)]) {
        seen[static_cast<size_t>(next)] = true;
        ++count;
        frontier.push_back(next);
      }
  }
  return count == g.n;
}

int countDegree(const Graph& g, size_t degree) {
  int k = 0;
  for (const auto& n : g.neighbours) k += n.size() == degree ? 1 : 0;
  return k;
}

}  // namespace

std::string classifyShape(const Cluster& cluster) {
  Graph g = cableGraph(cluster);
  if (g.n <= 1) return "single";
  if (g.edges == 0) {
    for (const ClusterNetwork& net : cluster.networks) {
      std::set<int> in;
      for (const NetworkMember& m : net.members) in.insert(m.host);
      if (static_cast<int>(in.size()) == g.n) return "lan";
    }
    return "partial";
  }
  if (!connected(g)) return "partial";
  if (g.n == 2) return "pair";
  auto n = static_cast<size_t>(g.n);
  if (countDegree(g, 2) == g.n && g.edges == g.n) return "ring";
  if (g.edges == g.n * (g.n - 1) / 2) return "full_mesh";
  if (g.edges == g.n - 1 && countDegree(g, 1) == 2 &&
      countDegree(g, 2) == g.n - 2)
    return "line";
  if (g.edges == g.n - 1 && countDegree(g, n - 1) == 1 &&
      countDegree(g, 1) == g.n - 1)
    return "star";
  return "partial";
}

}  // namespace mcl::topology
