#include "mlx_timing.h"

#include <mcl/mcl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <ratio>
#include <string>
#include <vector>

#include "mpi_abi.h"

namespace mlx_replay {

namespace {

using Clock = std::chrono::steady_clock;

// Microseconds per call of `call`, `iterations` times.
double timeCalls(int iterations, const std::function<void()>& call) {
  const auto start = Clock::now();
  for (int i = 0; i < iterations; ++i) call();
  return std::chrono::duration<double, std::micro>(Clock::now() - start)
             .count() /
         iterations;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

std::string runTiming(Mpi& m, int rank, int size) {
  mclUniqueId id;
  const char* text = getenv("REPLAY_DIRECT_ID");
  mclComm_t direct = nullptr;
  if (text == nullptr || mclUniqueIdFromString(text, &id) != mclSuccess ||
      mclCommInitRank(&direct, size, id, rank) != mclSuccess)
    return std::string("mcl's own communicator: ") + mclGetLastError(nullptr);
  constexpr int kRounds = 5;
  if (rank == 0)
    printf("%12s %12s %12s %10s %8s\n", "bytes", "mcl us", "library us",
           "extra us", "ratio");
  for (size_t bytes : {size_t(8), size_t(64), size_t(512), size_t(4) << 10,
                       size_t(32) << 10, size_t(256) << 10, size_t(2) << 20,
                       size_t(16) << 20, size_t(64) << 20}) {
    const size_t count = bytes / 4;
    std::vector<float> in(count, 1.0f), out(count);
    const int iterations =
        int(std::clamp<size_t>((size_t(64) << 20) / bytes, 5, 2000));
    std::vector<double> viaMcl, viaLibrary;
    for (int round = 0; round < kRounds; ++round) {
      viaMcl.push_back(timeCalls(iterations, [&] {
        mclAllReduce(in.data(), out.data(), count, mclFloat32, mclSum, direct,
                     nullptr);
      }));
      viaLibrary.push_back(timeCalls(iterations, [&] {
        m.allreduce(in.data(), out.data(), int(count), m.float32, m.sum,
                    m.world);
      }));
    }
    const double a = median(viaMcl), b = median(viaLibrary);
    if (rank == 0)
      printf("%12zu %12.2f %12.2f %10.2f %8.3f\n", bytes, a, b, b - a, b / a);
  }
  // mlx-lm's decode step of a 70B model: 160 rows of 8192 bfloat16.
  std::vector<uint16_t> row(8192, 0x3f80);  // 1.0
  std::vector<double> viaMcl, viaLibrary;
  for (int round = 0; round < kRounds; ++round) {
    viaMcl.push_back(timeCalls(20, [&] {
      for (int r = 0; r < 160; ++r)
        mclAllReduce(row.data(), row.data(), row.size(), mclBfloat16, mclSum,
                     direct, nullptr);
    }));
    viaLibrary.push_back(timeCalls(20, [&] {
      for (int r = 0; r < 160; ++r)
        m.allreduce(mcl::mpi::kInPlace, row.data(), int(row.size()), m.bfloat16,
                    m.sumBf16, m.world);
    }));
  }
  if (rank == 0)
    printf(
        "decode step (160 x 16 KiB bf16 all_sum): mcl %.1f us, library "
        "%.1f us per token (ratio %.3f)\n",
        median(viaMcl), median(viaLibrary),
        median(viaLibrary) / median(viaMcl));
  mclCommDestroy(direct);
  return "";
}

}  // namespace mlx_replay
