#include "algorithms/schedules/halving_doubling.h"

#include <vector>

namespace mcl::schedules {

namespace {

int largestPowerOfTwoAtMost(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

}  // namespace

HalvingDoublingRole halvingDoublingRole(int nranks, int rank) {
  HalvingDoublingRole role;
  role.activeCount = largestPowerOfTwoAtMost(nranks);
  const int folded = nranks - role.activeCount;  // pairs that fold
  if (rank < 2 * folded) {
    role.foldPartner = rank ^ 1;
    if (rank % 2 == 1) role.index = rank / 2;
  } else {
    role.index = rank - folded;
  }
  return role;
}

int activeRank(int nranks, int index) {
  const int folded = nranks - largestPowerOfTwoAtMost(nranks);
  return index < folded ? 2 * index + 1 : index + folded;
}

std::vector<HalvingStep> halvingSteps(int nranks, int rank) {
  std::vector<HalvingStep> steps;
  HalvingDoublingRole role = halvingDoublingRole(nranks, rank);
  if (role.index < 0) return steps;
  int lo = 0;
  int hi = role.activeCount;
  for (int distance = role.activeCount / 2; distance >= 1; distance /= 2) {
    HalvingStep s;
    s.peer = activeRank(nranks, role.index ^ distance);
    const int mid = lo + distance;
    if ((role.index & distance) == 0) {
      s.keepLo = lo, s.keepHi = mid, s.sendLo = mid, s.sendHi = hi;
    } else {
      s.keepLo = mid, s.keepHi = hi, s.sendLo = lo, s.sendHi = mid;
    }
    lo = s.keepLo;
    hi = s.keepHi;
    steps.push_back(s);
  }
  return steps;
}

}  // namespace mcl::schedules
