// How fast this rank decodes on its own: the example decoder's kernel
// (examples/decode/bf16_matvec.h) timed over weights too large for the
// caches (bytes of weights per second: what bounds a decode step) and over
// weights in cache with a batch (multiply-adds: what bounds a prefill).
// plan_command.cpp times the weights once with each rank alone and once
// with every rank at the same time: ranks that share a machine share its
// memory bandwidth when they decode at once (tensor-parallel), not when
// they take turns (pipeline stages).
#pragma once

#include <vector>

#include "plan/model_shape.h"

namespace mcl::perf::plan {

// Bytes of weights per second, out of the caches, batch 1, over a model's
// mix of matrices: each width timed on its own (the kernel's speed depends
// on the width, hardly on the rows), weighted by the weights a token reads
// at that width.
double measureWeightRate(const std::vector<MatrixUse>& matrices);
// Multiply-adds x 2 per second, weights in cache, a batch of 32.
double measureFlopsRate();

}  // namespace mcl::perf::plan
