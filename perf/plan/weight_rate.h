// How fast this rank decodes on its own: the example decoder's kernel
// (examples/decode/bf16_matvec.h) timed over weights too large for the
// caches (bytes of weights per second: what bounds a decode step) and over
// weights in cache with a batch (multiply-adds: what bounds a prefill).
// Every rank measures at the same time, so ranks that share a machine
// share its memory bandwidth as they will when decoding.
#pragma once

namespace mcl::perf::plan {

struct KernelRates {
  double weightBytesPerS = 0;
  double flopsPerS = 0;
};

KernelRates measureKernelRates();

}  // namespace mcl::perf::plan
