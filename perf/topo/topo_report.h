// Presenting the cluster mclCommGetTopology describes: a text report for
// people, Graphviz DOT for pictures, and the findings of the checks.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

namespace mcl::perf {

// Hosts, cables (interface at both ends, speed, wire), wires per pair,
// networks, shape and the path of every pair of ranks.
void printTopology(const nlohmann::json& topology, std::FILE* out);

// Each finding with its severity; with `explain`, also why and the fix.
// Returns the number of error-level findings.
int printFindings(const nlohmann::json& topology, bool explain, std::FILE* out);

// An undirected graph: a node per host (name, ranks), an edge per cable (a
// doubled pair gets two edges), dashed edges for shared networks.
std::string topologyDot(const nlohmann::json& topology);

}  // namespace mcl::perf
