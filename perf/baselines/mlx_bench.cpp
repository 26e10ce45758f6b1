// The MLX side of perf/compare: mx::distributed::all_sum on whichever of
// MLX's backends is named (ring: TCP sockets from MLX_HOSTFILE and MLX_RANK,
// as mlx.launch sets them; mpi: under mpirun, on the libmpi MLX loads),
// timed as mcl-perf times mclAllReduce. Built against an installed MLX
// (MLX_PREFIX/include, MLX_PREFIX/lib/libmlx); MLX's own code runs the
// collectives, this program only calls them as a model would.
//
//   mlx_bench BACKEND allreduce MINBYTES MAXBYTES FACTOR ITERS WARMUP
// float32 sums, one line per size, "bytes time_us": after the warm-up, the
// average of ITERS calls evaluated one by one (each all_sum is evaluated
// before the next starts, as mcl-perf waits for each call), averaged over
// the ranks.
//
//   mlx_bench BACKEND tp LAYERS HIDDEN PER_LAYER TOKENS WARMUP
// A decode step as mlx-lm runs one: LAYERS x PER_LAYER all_sums of HIDDEN
// bfloat16 elements, each the input of the next, evaluated once per token
// (MLX builds the token's graph lazily and runs it in one go). One line,
// "bytes_per_call median_us" of the tokens, each token's time the slowest
// rank's.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "mlx/array.h"
#include "mlx/distributed/distributed.h"
#include "mlx/distributed/ops.h"
#include "mlx/ops.h"
#include "mlx/transforms.h"

namespace mx = mlx::core;

namespace {

using Clock = std::chrono::steady_clock;

double microsecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start)
      .count();
}

// Every rank waits for every other: a one-element sum, evaluated.
void barrier(const mx::distributed::Group& group) {
  mx::array one = mx::distributed::all_sum(mx::ones({1}), group);
  mx::eval(one);
}

// The value every rank holds, reduced with sum (average) or max.
float acrossRanks(const mx::distributed::Group& group, float value,
                  bool slowest) {
  mx::array mine = mx::array(value);
  mx::array all = slowest ? mx::distributed::all_max(mine, group)
                          : mx::distributed::all_sum(mine, group);
  mx::eval(all);
  return slowest ? all.item<float>() : all.item<float>() / group.size();
}

int allReduceSweep(const mx::distributed::Group& group, size_t minBytes,
                   size_t maxBytes, size_t factor, int iters, int warmup) {
  for (size_t bytes = minBytes; bytes <= maxBytes; bytes *= factor) {
    const int count = static_cast<int>(bytes / sizeof(float));
    mx::array input = mx::full({count}, 1.0f + group.rank());
    mx::eval(input);
    for (int i = 0; i < warmup; ++i)
      mx::eval(mx::distributed::all_sum(input, group));
    barrier(group);
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < iters; ++i)
      mx::eval(mx::distributed::all_sum(input, group));
    const float us = static_cast<float>(microsecondsSince(start) / iters);
    const float average = acrossRanks(group, us, /*slowest=*/false);
    if (group.rank() == 0) {
      std::printf("%zu %.3f\n", bytes, average);
      std::fflush(stdout);
    }
  }
  return 0;
}

int decodeStep(const mx::distributed::Group& group, int layers, int hidden,
               int perLayer, int tokens, int warmup) {
  // Zeros: a chain of 160 sums of anything else overflows bfloat16, and
  // the values do not change the work.
  mx::array activations = mx::zeros({hidden}, mx::bfloat16);
  mx::eval(activations);
  std::vector<float> times;
  for (int t = -warmup; t < tokens; ++t) {
    barrier(group);
    const Clock::time_point start = Clock::now();
    mx::array x = activations;
    for (int call = 0; call < layers * perLayer; ++call)
      x = mx::distributed::all_sum(x, group);
    mx::eval(x);
    const float us = static_cast<float>(microsecondsSince(start));
    if (t >= 0) times.push_back(acrossRanks(group, us, /*slowest=*/true));
  }
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  const double median =
      n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2.0;
  if (group.rank() == 0) {
    std::printf("%zu %.3f\n", static_cast<size_t>(hidden) * 2, median);
    std::fflush(stdout);
  }
  return 0;
}

bool nonNegative(const char* text, long long* value) {
  char* end = nullptr;
  *value = std::strtoll(text, &end, 10);
  return end != text && *end == '\0' && *value >= 0;
}

int usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s ring|mpi allreduce MINBYTES MAXBYTES FACTOR ITERS "
               "WARMUP\n       %s ring|mpi tp LAYERS HIDDEN PER_LAYER TOKENS "
               "WARMUP\n",
               program, program);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 8) return usage(argv[0]);
  const std::string backend = argv[1], mode = argv[2];
  long long a[5];
  for (int i = 0; i < 5; ++i)
    if (!nonNegative(argv[3 + i], &a[i])) {
      std::fprintf(stderr, "%s: argument %d (%s) is not a count\n", argv[0],
                   3 + i, argv[3 + i]);
      return 2;
    }
  try {
    // strict: a backend that cannot start is an error, never a group of one
    // that would time nothing.
    mx::distributed::Group group = mx::distributed::init(true, backend);
    if (mode == "allreduce" && a[0] >= 4 && a[2] >= 2 && a[3] >= 1)
      return allReduceSweep(group, a[0], a[1], a[2], a[3], a[4]);
    if (mode == "tp" && a[0] >= 1 && a[1] >= 1 && a[2] >= 1 && a[3] >= 1)
      return decodeStep(group, a[0], a[1], a[2], a[3], a[4]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: MLX's %s backend: %s\n", argv[0], backend.c_str(),
                 e.what());
    return 1;
  }
  return usage(argv[0]);
}
