// How fast this rank decodes on its own: the example decoder's kernel
// (examples/decode/bf16_matvec.h) timed over weights too large for the
// caches (bytes of weights per second: what bounds a decode step) and over
// weights in cache with a batch (multiply-adds: what bounds a prefill).
// plan_command.cpp times the weights once with each rank alone and once
// with every rank at the same time: ranks that share a machine share its
// memory bandwidth when they decode at once (tensor-parallel), not when
// they take turns (pipeline stages).
#pragma once

namespace mcl::perf::plan {

// Bytes of weights per second, out of the caches, batch 1.
double measureWeightRate();
// Multiply-adds x 2 per second, weights in cache, a batch of 32.
double measureFlopsRate();

}  // namespace mcl::perf::plan
