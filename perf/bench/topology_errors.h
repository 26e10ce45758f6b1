// What a benchmark prints before its table: the doctor's errors (the
// checks of `mcl-perf topo --check`), so a result file taken over a
// miscabled cluster says so at its top.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace mcl::perf {

// "# Topology: ..." lines for each error-level finding (with its fix),
// or "" when there is none.
std::string topologyErrorLines(const nlohmann::json& topology);

// "host 0 (a) <-> host 1 (b) over lan lan0>lan0" for each pair of hosts
// whose TCP path leaves the cables (LAN, routed), joined by "; "; "" when
// none does.
std::string slowPathsText(const nlohmann::json& topology);

}  // namespace mcl::perf
