// Every algorithm mcl has, one table: which collective it serves, its name
// (as MCL_ALGO and `mcl-perf --algo` take it), what it does, the function
// that appends its steps, and its cost shape (what the tuner prices). Choosing
// among them is the tuner's job (tuner.h) unless MCL_ALGO forces a choice.
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/algorithm.h"
#include "algorithms/context.h"
#include "algorithms/cost_shape.h"
#include "algorithms/op.h"
#include "algorithms/step.h"

namespace mcl {

using AppendSteps = void (*)(const OpArgs&, const AlgoContext&,
                             std::vector<Step>&);

struct AlgorithmInfo {
  Collective collective;
  Algorithm id;
  const char* name;
  const char* description;
  AppendSteps append;
  CostOf cost;
};

std::span<const AlgorithmInfo> algorithmTable();

// The entry for (collective, id); null when that collective lacks it.
const AlgorithmInfo* findAlgorithm(Collective collective, Algorithm id);

const char* algorithmName(Algorithm id);  // "ring", "auto", ...

// Parses MCL_ALGO: "allreduce:tree;allgather:ring", or a bare name that
// applies to every collective having it ("tree"), or a mix. Empty and
// "auto" force nothing. Throws mclInvalidArgument naming the unknown
// collective or algorithm, and what is valid there.
ForcedAlgorithms parseAlgorithmSpec(std::string_view spec);

// "allreduce:tree;allgather:ring": the forced choices in a fixed form
// ("" when none), so ranks can compare them.
std::string describeForced(const ForcedAlgorithms& forced);

// "ring, tree, direct, halving_doubling" for one collective.
std::string algorithmNamesOf(Collective collective);

}  // namespace mcl
