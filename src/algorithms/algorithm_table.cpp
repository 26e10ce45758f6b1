#include "algorithms/algorithm_table.h"

#include <cctype>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "algorithms/collectives.h"
#include "base/error.h"

namespace mcl {

namespace {

constexpr AlgorithmInfo kTable[] = {
    {Collective::AllReduce, Algorithm::Ring, "ring",
     "reduce-scatter then all-gather around the ring of ranks, pipelined in "
     "rounds; bandwidth-optimal, 2(n-1) hops",
     appendRingAllReduce, ringAllReduceCost},
    {Collective::AllReduce, Algorithm::Tree, "tree",
     "double binary tree: two trees, each reducing half the buffer up and "
     "broadcasting it down, pipelined in chunks; log2(n) hops",
     appendTreeAllReduce, treeAllReduceCost},
    {Collective::AllReduce, Algorithm::Direct, "direct",
     "one-shot: every rank sends its whole buffer to every other and folds "
     "all of them in rank order; one hop, for small buffers",
     appendDirectAllReduce, directAllReduceCost},
    {Collective::AllReduce, Algorithm::HalvingDoubling, "halving_doubling",
     "recursive halving reduce-scatter then recursive doubling all-gather "
     "among a power of two of ranks (the others fold in first); 2 log2(n) "
     "hops",
     appendHalvingDoublingAllReduce, halvingDoublingAllReduceCost},
    {Collective::AllGather, Algorithm::Ring, "ring",
     "each rank's block travels the ring of ranks, pipelined in rounds",
     appendRingAllGather, ringAllGatherCost},
    {Collective::AllGather, Algorithm::Direct, "direct",
     "every rank sends its block straight to every other",
     appendDirectAllGather, directAllGatherCost},
    {Collective::Broadcast, Algorithm::Chain, "chain",
     "a pipelined chain from the root through every rank", appendChainBroadcast,
     chainBroadcastCost},
    {Collective::Broadcast, Algorithm::Tree, "tree",
     "a pipelined binary tree from the root; log2(n) hops", appendTreeBroadcast,
     treeBroadcastCost},
    {Collective::Reduce, Algorithm::Chain, "chain",
     "a pipelined chain through every rank, ending at the root",
     appendChainReduce, chainReduceCost},
    {Collective::Reduce, Algorithm::Tree, "tree",
     "a pipelined binary tree toward the root; log2(n) hops", appendTreeReduce,
     treeReduceCost},
    {Collective::ReduceScatter, Algorithm::Ring, "ring",
     "the reduce-scatter half of the ring all-reduce", appendRingReduceScatter,
     ringReduceScatterCost},
    {Collective::ReduceScatter, Algorithm::Direct, "direct",
     "every rank sends each block straight to its owner, which folds them in "
     "rank order",
     appendDirectReduceScatter, directReduceScatterCost},
    {Collective::AllToAll, Algorithm::Direct, "direct",
     "every rank sends each block straight to the rank it is for, in rounds",
     appendDirectAllToAll, directAllToAllCost},
};

// Every row can be run and priced: an algorithm without a cost would cost
// nothing, and the tuner would always pick it.
constexpr bool everyRowComplete() {
  for (const AlgorithmInfo& a : kTable)
    if (a.append == nullptr || a.cost == nullptr || a.name == nullptr)
      return false;
  return true;
}
static_assert(everyRowComplete(), "an algorithm lacks its steps or its cost");

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// "reduce_scatter" and "reduce-scatter" name reducescatter too.
std::string canonical(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '_' && c != '-')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const AlgorithmInfo* byName(Collective collective, std::string_view name) {
  for (const AlgorithmInfo& a : kTable)
    if (a.collective == collective && name == a.name) return &a;
  return nullptr;
}

std::string allCollectiveNames() {
  std::string s;
  for (size_t c = 0; c < kTunedCollectives; ++c)
    s += (s.empty() ? "" : ", ") + std::string(collectiveName(Collective(c)));
  return s;
}

std::string allAlgorithmNames() {
  std::string s;
  for (const AlgorithmInfo& a : kTable)
    if (s.find(a.name) == std::string::npos)
      s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s;
}

}  // namespace

std::span<const AlgorithmInfo> algorithmTable() { return kTable; }

const AlgorithmInfo* findAlgorithm(Collective collective, Algorithm id) {
  for (const AlgorithmInfo& a : kTable)
    if (a.collective == collective && a.id == id) return &a;
  return nullptr;
}

const char* algorithmName(Algorithm id) {
  if (id == Algorithm::Auto) return "auto";
  for (const AlgorithmInfo& a : kTable)
    if (a.id == id) return a.name;
  return "unknown";
}

std::string describeForced(const ForcedAlgorithms& forced) {
  std::string s;
  for (size_t c = 0; c < kTunedCollectives; ++c)
    if (forced[c] != Algorithm::Auto)
      s += (s.empty() ? "" : ";") + std::string(collectiveName(Collective(c))) +
           ":" + algorithmName(forced[c]);
  return s;
}

std::string algorithmNamesOf(Collective collective) {
  std::string s;
  for (const AlgorithmInfo& a : kTable)
    if (a.collective == collective)
      s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s;
}

ForcedAlgorithms parseAlgorithmSpec(std::string_view spec) {
  ForcedAlgorithms forced;
  forced.fill(Algorithm::Auto);
  while (!spec.empty()) {
    size_t end = spec.find(';');
    std::string_view item = trim(spec.substr(0, end));
    spec = end == std::string_view::npos ? std::string_view()
                                         : spec.substr(end + 1);
    if (item.empty() || item == "auto") continue;
    size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
      // A bare name: every collective that has it.
      bool any = false;
      for (size_t c = 0; c < kTunedCollectives; ++c)
        if (const AlgorithmInfo* a = byName(Collective(c), item)) {
          forced[c] = a->id;
          any = true;
        }
      if (!any)
        throw error(mclInvalidArgument,
                    "MCL_ALGO: no collective has an algorithm \"%.*s\" "
                    "(algorithms: %s; or collective:algorithm, e.g. "
                    "allreduce:tree)",
                    int(item.size()), item.data(), allAlgorithmNames().c_str());
      continue;
    }
    std::string collective = canonical(trim(item.substr(0, colon)));
    std::string_view name = trim(item.substr(colon + 1));
    size_t c = 0;
    while (c < kTunedCollectives && collective != collectiveName(Collective(c)))
      ++c;
    if (c == kTunedCollectives)
      throw error(mclInvalidArgument,
                  "MCL_ALGO: unknown collective \"%s\" in \"%.*s\" "
                  "(collectives: %s)",
                  collective.c_str(), int(item.size()), item.data(),
                  allCollectiveNames().c_str());
    if (name == "auto") {
      forced[c] = Algorithm::Auto;
      continue;
    }
    const AlgorithmInfo* a = byName(Collective(c), name);
    if (a == nullptr)
      throw error(mclInvalidArgument,
                  "MCL_ALGO: %s has no algorithm \"%.*s\" (it has: %s, auto)",
                  collectiveName(Collective(c)), int(name.size()), name.data(),
                  algorithmNamesOf(Collective(c)).c_str());
    forced[c] = a->id;
  }
  return forced;
}

}  // namespace mcl
