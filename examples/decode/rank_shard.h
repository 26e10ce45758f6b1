// What one rank of the example decoder holds: its shard of the weights
// (Megatron-style tensor-parallel within its stage, its stage's layers) and
// its KV cache, random bfloat16 values the same whatever the layout (an
// element's value depends on the seed, the weight and its place in the
// whole matrix, not on the shard it falls in).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model_shape.h"

namespace mcl_example {

// Where a rank sits and what it decodes.
struct Layout {
  int tp = 1;  // ranks per stage (tensor-parallel)
  int pp = 1;  // stages (pipeline-parallel)
  int tpRank = 0;
  int stage = 0;
  int batch = 1;    // sequences decoded together
  int context = 1;  // KV cache positions each step attends over
};

// The sizes of one rank's shard.
struct ShardDims {
  size_t tp = 1;
  size_t tpRank = 0;
  size_t hidden = 0;
  size_t headDim = 0;
  size_t fullHeads = 0;
  size_t fullKvHeads = 0;
  size_t heads = 0;      // query heads held
  size_t firstHead = 0;  // the first one's index in the model
  size_t kvHeads = 0;    // KV heads held (1 where --tp exceeds the KV heads)
  size_t firstKvHead = 0;
  size_t intermediate = 0;  // columns held of each MLP
  size_t expertIntermediate = 0;
  size_t sharedIntermediate = 0;
  size_t experts = 0;
  size_t expertsPerToken = 0;
  size_t vocab = 0;  // the head's columns held
  size_t firstVocab = 0;
  size_t fullVocab = 0;
  LayerRange layers;
  bool firstStage = false;
  bool lastStage = false;
  size_t batch = 0;
  size_t context = 0;
  float eps = 0;

  size_t qDim() const { return heads * headDim; }
  size_t kvDim() const { return kvHeads * headDim; }
  bool moe() const { return experts > 0; }
};

ShardDims shardDims(const ModelShape& m, const Layout& layout);

// Bytes the shard takes, known before anything is allocated.
struct ShardBytes {
  uint64_t weights = 0;  // bf16 matrices and float norm vectors
  uint64_t kvCache = 0;
};
ShardBytes shardBytes(const ShardDims& d);

// gate and up [hidden][width], down [width][hidden]: `width` columns of
// the MLP's.
struct Mlp {
  std::vector<uint16_t> gate, up, down;
  size_t width = 0;
};

struct LayerShard {
  std::vector<float> attentionNorm, mlpNorm;  // [hidden]
  std::vector<uint16_t> wq;                   // [hidden][qDim]
  std::vector<uint16_t> wk, wv;               // [hidden][kvDim]
  std::vector<uint16_t> wo;                   // [qDim][hidden]
  Mlp dense;                                  // dense models
  std::vector<uint16_t> router;               // [hidden][experts], whole
  std::vector<Mlp> experts;
  Mlp shared;  // width 0: none
  // [batch][context][kvHeads][headDim] each.
  std::vector<uint16_t> keys, values;
};

struct RankShard {
  ShardDims dims;
  std::vector<uint16_t> embedding;  // first stage: [vocab][hidden], whole
  std::vector<LayerShard> layers;   // dims.layers
  std::vector<float> finalNorm;     // last stage: [hidden]
  std::vector<uint16_t> head;       // last stage: [hidden][dims.vocab]
};

// Allocates the shard and fills it; throws std::bad_alloc.
RankShard buildShard(const ShardDims& d, uint64_t seed);

// The token sequence b starts from.
int32_t firstToken(uint64_t seed, size_t b, size_t vocab);

}  // namespace mcl_example
