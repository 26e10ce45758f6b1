// What an algorithm costs, as the tuner prices it: per byte of the
// operation, the hops on its critical path, the bytes one rank sends, the
// bytes it folds into a result, and the hops that forward a whole chunk
// before the next can start (pipelines). Each algorithm's row of the table
// (algorithm_table.h) carries its shape, so none can be added without one.
#pragma once

namespace mcl {

struct CostShape {
  double hops = 0;
  double sent = 0;
  double reduced = 0;
  double fillHops = 0;
};

using CostOf = CostShape (*)(int nranks);

CostShape ringAllReduceCost(int nranks);
CostShape treeAllReduceCost(int nranks);
CostShape directAllReduceCost(int nranks);
CostShape halvingDoublingAllReduceCost(int nranks);
CostShape ringAllGatherCost(int nranks);
CostShape directAllGatherCost(int nranks);
CostShape chainBroadcastCost(int nranks);
CostShape treeBroadcastCost(int nranks);
CostShape chainReduceCost(int nranks);
CostShape treeReduceCost(int nranks);
CostShape ringReduceScatterCost(int nranks);
CostShape directReduceScatterCost(int nranks);
CostShape directAllToAllCost(int nranks);

}  // namespace mcl
