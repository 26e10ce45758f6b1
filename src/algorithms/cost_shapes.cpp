#include <cmath>

#include "algorithms/cost_shape.h"
#include "algorithms/schedules/halving_doubling.h"
#include "algorithms/schedules/tree.h"

namespace mcl {

namespace {

// Of an n-block buffer, the share a rank moves: all blocks but its own.
double others(int n) { return (n - 1.0) / n; }

// Every rank sends to every peer before receiving: the sends overlap,
// partly.
double directHops(int n) { return 1 + (n - 2.0) / 2; }

}  // namespace

CostShape ringAllReduceCost(int n) {
  return {2 * (n - 1.0), 2 * others(n), others(n), 0};
}

CostShape treeAllReduceCost(int n) {
  const double depth = schedules::treeDepth(n);
  // An inner node sends half the buffer up and twice half down, and folds
  // two halves; a leaf sends half up: two trees make about 2 and 1 (1.5
  // and 0.5 with two ranks, one child each).
  return {2 * (depth - 1) + 1, n == 2 ? 1.5 : 2.0, n == 2 ? 0.5 : 1.0,
          2 * (depth - 1)};
}

CostShape directAllReduceCost(int n) {
  // Every rank folds every other rank's whole buffer.
  return {directHops(n), n - 1.0, n - 1.0, 0};
}

CostShape halvingDoublingAllReduceCost(int n) {
  const int p = schedules::halvingDoublingRole(n, 0).activeCount;
  const double fold = p == n ? 0 : 1;
  return {2 * std::log2(double(p)) + 2 * fold, 2 * (p - 1.0) / p + 2 * fold,
          (p - 1.0) / p + fold, 0};
}

CostShape ringAllGatherCost(int n) { return {n - 1.0, others(n), 0, 0}; }

CostShape directAllGatherCost(int n) {
  return {directHops(n), others(n), 0, 0};
}

CostShape chainBroadcastCost(int n) { return {n - 1.0, 1, 0, n - 2.0}; }

CostShape treeBroadcastCost(int n) {
  const double depth = schedules::treeDepth(n);
  return {depth - 1, 2, 0, depth - 2};
}

CostShape chainReduceCost(int n) { return {n - 1.0, 1, 1, n - 2.0}; }

CostShape treeReduceCost(int n) {
  const double depth = schedules::treeDepth(n);
  return {depth - 1, 2, 2, depth - 2};
}

CostShape ringReduceScatterCost(int n) {
  return {n - 1.0, others(n), others(n), 0};
}

CostShape directReduceScatterCost(int n) {
  return {directHops(n), others(n), others(n), 0};
}

CostShape directAllToAllCost(int n) { return {directHops(n), others(n), 0, 0}; }

}  // namespace mcl
