// Reduction kernel throughput against memcpy, the ceiling a kernel that
// streams through memory can approach.
//
// bytes_per_second counts OUTPUT bytes (count * element size per call), the
// way nccl-tests' algbw counts the buffer size rather than the traffic; so
// memcpy and reduce are compared per byte of result. The "traffic" counter
// adds what moves through memory: memcpy reads and writes each byte (2x),
// reduce reads two inputs and writes one output (3x).
//
// Sizes: 64 KiB fits in L2, 1 MiB in L2/LLC depending on the CPU, 64 MiB
// only in DRAM.
#include <benchmark/benchmark.h>
#include <mcl/mcl.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "algorithms/kernels/reduce.h"
#include "algorithms/kernels/types.h"

namespace {

using mcl::kernels::typeSize;

void setRates(benchmark::State& state, size_t outputBytes,
              int bytesMovedPerOutputByte) {
  const auto total = static_cast<int64_t>(state.iterations()) *
                     static_cast<int64_t>(outputBytes);
  state.SetBytesProcessed(total);
  state.counters["traffic"] = benchmark::Counter(
      static_cast<double>(total) * bytesMovedPerOutputByte,
      benchmark::Counter::kIsRate, benchmark::Counter::kIs1024);
}

// Page-aligned buffers, as large allocations and mclMemAlloc give. With
// malloc's 16-byte offsets, a store to dst and a load from a or b can share
// their low 12 address bits and stall on false 4K aliasing, which measures
// the allocator rather than the kernel.
struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<uint8_t[], FreeDeleter>;

// Filled with 1 in each type, so sums stay small, finite and normal
// (subnormal floats are slow on some CPUs and would measure the wrong thing).
Buffer filledWithOnes(size_t bytes, mclDataType_t type) {
  constexpr size_t kPage = 4096;  // bytes is a multiple of it
  Buffer buf(static_cast<uint8_t*>(std::aligned_alloc(kPage, bytes)));
  const size_t size = typeSize(type);
  uint64_t one = 0;
  switch (type) {
    case mclFloat32:
      one = 0x3f800000;
      break;
    case mclFloat16:
      one = 0x3c00;
      break;
    case mclBfloat16:
      one = 0x3f80;
      break;
    case mclFloat64:
      one = 0x3ff0000000000000;
      break;
    case mclFloat8e4m3:  // exponent bias 7
      one = 0x38;
      break;
    case mclFloat8e5m2:  // exponent bias 15
      one = 0x3c;
      break;
    default:
      one = 1;  // integers
      break;
  }
  for (size_t i = 0; i + size <= bytes; i += size) {
    std::memcpy(&buf[i], &one, size);  // little-endian
  }
  return buf;
}

void BM_Memcpy(benchmark::State& state) {
  const auto bytes = static_cast<size_t>(state.range(0));
  Buffer src = filledWithOnes(bytes, mclUint8);
  Buffer dst = filledWithOnes(bytes, mclUint8);
  for (auto _ : state) {
    mcl::kernels::copy(dst.get(), src.get(), bytes);
    benchmark::DoNotOptimize(dst.get());
    benchmark::ClobberMemory();
  }
  setRates(state, bytes, 2);
}

void BM_ReduceSum(benchmark::State& state, mclDataType_t type) {
  const auto bytes = static_cast<size_t>(state.range(0));
  const size_t count = bytes / typeSize(type);
  Buffer a = filledWithOnes(bytes, type);
  Buffer b = filledWithOnes(bytes, type);
  Buffer dst = filledWithOnes(bytes, type);
  for (auto _ : state) {
    mcl::kernels::reduce(dst.get(), a.get(), b.get(), count, type, mclSum);
    benchmark::DoNotOptimize(dst.get());
    benchmark::ClobberMemory();
  }
  setRates(state, bytes, 3);
  if (type == mclFloat16 || type == mclBfloat16 || type == mclFloat8e4m3 ||
      type == mclFloat8e5m2) {
    state.SetLabel(mcl::kernels::kernelPath());  // "avx2", "neon", "portable"
  }
}

void sizes(benchmark::internal::Benchmark* bench) {
  bench->Arg(64 << 10)->Arg(1 << 20)->Arg(64 << 20);
}

BENCHMARK(BM_Memcpy)->Apply(sizes);
BENCHMARK_CAPTURE(BM_ReduceSum, float32, mclFloat32)->Apply(sizes);
BENCHMARK_CAPTURE(BM_ReduceSum, float16, mclFloat16)->Apply(sizes);
BENCHMARK_CAPTURE(BM_ReduceSum, bfloat16, mclBfloat16)->Apply(sizes);
BENCHMARK_CAPTURE(BM_ReduceSum, float64, mclFloat64)->Apply(sizes);
BENCHMARK_CAPTURE(BM_ReduceSum, float8e4m3, mclFloat8e4m3)->Apply(sizes);
BENCHMARK_CAPTURE(BM_ReduceSum, float8e5m2, mclFloat8e5m2)->Apply(sizes);
BENCHMARK_CAPTURE(BM_ReduceSum, int8, mclInt8)->Apply(sizes);
BENCHMARK_CAPTURE(BM_ReduceSum, uint8, mclUint8)->Apply(sizes);
BENCHMARK_CAPTURE(BM_ReduceSum, int32, mclInt32)->Apply(sizes);
BENCHMARK_CAPTURE(BM_ReduceSum, uint32, mclUint32)->Apply(sizes);
BENCHMARK_CAPTURE(BM_ReduceSum, int64, mclInt64)->Apply(sizes);
BENCHMARK_CAPTURE(BM_ReduceSum, uint64, mclUint64)->Apply(sizes);

}  // namespace
