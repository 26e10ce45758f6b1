// Order statistics of a set of timings: latency is reported by its median
// and its tail, never by a mean that one descheduling would dominate.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace mcl::perf {

// The q-quantile (0 <= q <= 1) of sorted values, interpolating linearly
// between neighbours; 0 for no values.
inline double quantileOfSorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double position = q * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

struct SampleSummary {
  double min = 0;
  double median = 0;
  double p99 = 0;
};

// Sorts values in place and summarises them.
inline SampleSummary summarize(std::vector<double>& values) {
  SampleSummary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.min = values.front();
  s.median = quantileOfSorted(values, 0.5);
  s.p99 = quantileOfSorted(values, 0.99);
  return s;
}

}  // namespace mcl::perf
