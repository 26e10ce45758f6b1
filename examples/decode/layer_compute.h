// The arithmetic one rank does for a decode step, between the all-reduces
// (no communication here): RMSNorm, its heads' attention over the KV cache,
// its columns of the MLP or of each chosen expert, its share of the logits.
// Every weight multiply is matvecBf16 (bf16_matvec.h) over a batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rank_shard.h"

namespace mcl_example {

// Buffers reused every step.
struct Workspace {
  explicit Workspace(const ShardDims& d);
  std::vector<float> q, k, v, attention;   // [batch][qDim or kvDim]
  std::vector<float> scores;               // [heads per KV head][context]
  std::vector<float> cacheRow;             // [headDim]
  std::vector<float> row;                  // matvecBf16's widened row
  std::vector<float> gate, up;             // [batch][widest MLP]
  std::vector<float> routerLogits;         // [batch][experts]
  std::vector<float> expertIn, expertOut;  // [batch][hidden]
};

// y[b] = x[b] / rms(x[b]) * w, for b < batch.
void rmsNorm(const float* x, const float* w, float* y, size_t n, size_t batch,
             float eps);

// out[batch][hidden] = this rank's share of attention's output projection
// (a sum over the ranks of the stage gives the whole). The step's keys and
// values go to cache position `slot` first; every position is attended.
void attentionShard(LayerShard& layer, const ShardDims& d, const float* h,
                    size_t slot, float* out, Workspace& ws);

// out[batch][hidden] = this rank's share of the MLP: dense, or the top-k
// experts of each sequence weighted by their softmax, plus the shared one.
void mlpShard(const LayerShard& layer, const ShardDims& d, const float* h,
              float* out, Workspace& ws);

// logits[batch][d.vocab] = h x this rank's columns of the head.
void logitsShard(const RankShard& s, const float* h, float* logits,
                 Workspace& ws);

}  // namespace mcl_example
