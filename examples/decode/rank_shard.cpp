#include "rank_shard.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "bf16_matvec.h"

namespace mcl_example {

namespace {

// splitmix64's finalizer: a counter-based generator, so any element of a
// matrix is drawn without drawing the ones before it.
uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Uniform in [-1, 1).
float uniform(uint64_t key, uint64_t index) {
  const uint64_t bits = mix(key + index) >> 40;  // 24 bits
  return static_cast<float>(bits) * (2.0f / 16777216.0f) - 1.0f;
}

enum class Kind : uint64_t {
  Embedding = 1,
  AttentionNorm,
  MlpNorm,
  Wq,
  Wk,
  Wv,
  Wo,
  Gate,
  Up,
  Down,
  Router,
  Keys,
  Values,
  FinalNorm,
  Head,
};

// A weight's identity: what it is, its layer, its expert (0: not an
// expert's; experts + 1: the shared expert).
uint64_t weightKey(uint64_t seed, Kind kind, size_t layer = 0,
                   size_t expert = 0) {
  return mix(mix(seed) ^ (static_cast<uint64_t>(kind) << 56) ^
             (uint64_t{layer} << 32) ^ uint64_t{expert});
}

// A block of a matrix with `fullCols` columns, amplitude times uniform.
struct Block {
  size_t rows = 0;
  size_t firstRow = 0;
  size_t cols = 0;
  size_t firstCol = 0;
  size_t fullCols = 0;
};

std::vector<uint16_t> randomBf16(uint64_t key, const Block& b,
                                 float amplitude) {
  std::vector<uint16_t> w(b.rows * b.cols);
  for (size_t i = 0; i < b.rows; ++i) {
    const uint64_t base = (b.firstRow + i) * b.fullCols + b.firstCol;
    uint16_t* out = w.data() + i * b.cols;
    for (size_t o = 0; o < b.cols; ++o)
      out[o] = floatToBf16(amplitude * uniform(key, base + o));
  }
  return w;
}

// A whole [in][out] matrix's columns [firstCol, firstCol + cols).
std::vector<uint16_t> columns(uint64_t key, size_t in, size_t fullOut,
                              size_t cols, size_t firstCol) {
  return randomBf16(key, {in, 0, cols, firstCol, fullOut},
                    1.0f / std::sqrt(static_cast<float>(in)));
}

// A whole [in][out] matrix's rows [firstRow, firstRow + rows).
std::vector<uint16_t> rows(uint64_t key, size_t fullIn, size_t rowCount,
                           size_t firstRow, size_t out) {
  return randomBf16(key, {rowCount, firstRow, out, 0, out},
                    1.0f / std::sqrt(static_cast<float>(fullIn)));
}

std::vector<float> norm(uint64_t key, size_t n) {
  std::vector<float> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = 1.0f + 0.1f * uniform(key, i);
  return w;
}

// This rank's columns of an MLP, `width` of them.
Mlp mlp(const ShardDims& d, uint64_t seed, size_t layer, size_t expert,
        size_t width) {
  Mlp m;
  m.width = width;
  if (width == 0) return m;
  const size_t full = width * d.tp;
  const size_t first = d.tpRank * width;
  m.gate = columns(weightKey(seed, Kind::Gate, layer, expert), d.hidden, full,
                   width, first);
  m.up = columns(weightKey(seed, Kind::Up, layer, expert), d.hidden, full,
                 width, first);
  m.down = rows(weightKey(seed, Kind::Down, layer, expert), full, width, first,
                d.hidden);
  return m;
}

uint64_t mlpBytes(const ShardDims& d, size_t width) {
  return 3ull * d.hidden * width * 2;
}

}  // namespace

ShardDims shardDims(const ModelShape& m, const Layout& layout) {
  const size_t tp = static_cast<size_t>(layout.tp);
  const size_t rank = static_cast<size_t>(layout.tpRank);
  ShardDims d;
  d.tp = tp;
  d.tpRank = rank;
  d.hidden = static_cast<size_t>(m.hidden);
  d.headDim = static_cast<size_t>(m.headDim);
  d.fullHeads = static_cast<size_t>(m.heads);
  d.fullKvHeads = static_cast<size_t>(m.kvHeads);
  d.heads = d.fullHeads / tp;
  d.firstHead = rank * d.heads;
  if (tp <= d.fullKvHeads) {
    d.kvHeads = d.fullKvHeads / tp;
    d.firstKvHead = rank * d.kvHeads;
  } else {  // each KV head on tp / kvHeads ranks
    d.kvHeads = 1;
    d.firstKvHead = rank / (tp / d.fullKvHeads);
  }
  d.intermediate = static_cast<size_t>(m.intermediate) / tp;
  d.experts = static_cast<size_t>(m.experts);
  d.expertsPerToken = static_cast<size_t>(m.expertsPerToken);
  d.expertIntermediate = static_cast<size_t>(m.expertIntermediate) / tp;
  d.sharedIntermediate = static_cast<size_t>(m.sharedIntermediate) / tp;
  d.fullVocab = static_cast<size_t>(m.vocab);
  d.vocab = d.fullVocab / tp;
  d.firstVocab = rank * d.vocab;
  d.layers = stageLayers(m, layout.pp, layout.stage);
  d.firstStage = layout.stage == 0;
  d.lastStage = layout.stage == layout.pp - 1;
  d.batch = static_cast<size_t>(layout.batch);
  d.context = static_cast<size_t>(layout.context);
  d.eps = m.rmsNormEps;
  return d;
}

ShardBytes shardBytes(const ShardDims& d) {
  const uint64_t h = d.hidden;
  uint64_t layer = 2 * h * 4;                           // norms
  layer += (2 * h * d.qDim() + 2 * h * d.kvDim()) * 2;  // q, o; k, v
  if (d.moe()) {
    layer += h * d.experts * 2;  // router
    layer += d.experts * mlpBytes(d, d.expertIntermediate);
    layer += mlpBytes(d, d.sharedIntermediate);
  } else {
    layer += mlpBytes(d, d.intermediate);
  }
  ShardBytes b;
  b.weights = layer * static_cast<uint64_t>(d.layers.count);
  if (d.firstStage) b.weights += uint64_t{d.fullVocab} * h * 2;
  if (d.lastStage) b.weights += h * 4 + h * d.vocab * 2;
  b.kvCache = 2ull * d.batch * d.context * d.kvDim() * 2 *
              static_cast<uint64_t>(d.layers.count);
  return b;
}

RankShard buildShard(const ShardDims& d, uint64_t seed) {
  RankShard s;
  s.dims = d;
  if (d.firstStage)
    s.embedding = randomBf16(weightKey(seed, Kind::Embedding),
                             {d.fullVocab, 0, d.hidden, 0, d.hidden}, 1.0f);
  const size_t qFull = d.fullHeads * d.headDim;
  const size_t kvFull = d.fullKvHeads * d.headDim;
  for (int i = 0; i < d.layers.count; ++i) {
    const size_t l = static_cast<size_t>(d.layers.first + i);
    LayerShard& L = s.layers.emplace_back();
    L.attentionNorm = norm(weightKey(seed, Kind::AttentionNorm, l), d.hidden);
    L.mlpNorm = norm(weightKey(seed, Kind::MlpNorm, l), d.hidden);
    L.wq = columns(weightKey(seed, Kind::Wq, l), d.hidden, qFull, d.qDim(),
                   d.firstHead * d.headDim);
    L.wk = columns(weightKey(seed, Kind::Wk, l), d.hidden, kvFull, d.kvDim(),
                   d.firstKvHead * d.headDim);
    L.wv = columns(weightKey(seed, Kind::Wv, l), d.hidden, kvFull, d.kvDim(),
                   d.firstKvHead * d.headDim);
    L.wo = rows(weightKey(seed, Kind::Wo, l), qFull, d.qDim(),
                d.firstHead * d.headDim, d.hidden);
    if (d.moe()) {
      L.router = columns(weightKey(seed, Kind::Router, l), d.hidden, d.experts,
                         d.experts, 0);
      for (size_t e = 0; e < d.experts; ++e)
        L.experts.push_back(mlp(d, seed, l, e + 1, d.expertIntermediate));
      L.shared = mlp(d, seed, l, d.experts + 1, d.sharedIntermediate);
    } else {
      L.dense = mlp(d, seed, l, 0, d.intermediate);
    }
    // The cache as a [batch x context][kvHeads x headDim] matrix.
    const Block cache{d.batch * d.context, 0, d.kvDim(),
                      d.firstKvHead * d.headDim, kvFull};
    L.keys = randomBf16(weightKey(seed, Kind::Keys, l), cache, 1.0f);
    L.values = randomBf16(weightKey(seed, Kind::Values, l), cache, 1.0f);
  }
  if (d.lastStage) {
    s.finalNorm = norm(weightKey(seed, Kind::FinalNorm), d.hidden);
    s.head = columns(weightKey(seed, Kind::Head), d.hidden, d.fullVocab,
                     d.vocab, d.firstVocab);
  }
  return s;
}

int32_t firstToken(uint64_t seed, size_t b, size_t vocab) {
  return static_cast<int32_t>(mix(mix(seed) + b) % vocab);
}

}  // namespace mcl_example
