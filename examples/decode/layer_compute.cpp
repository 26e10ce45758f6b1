#include "layer_compute.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "bf16_matvec.h"

namespace mcl_example {

namespace {

size_t widestMlp(const ShardDims& d) {
  return std::max({d.intermediate, d.expertIntermediate, d.sharedIntermediate});
}

// y[batch][out] = x[batch][in] x w[in][out].
void multiply(const std::vector<uint16_t>& w, const float* x, float* y,
              size_t in, size_t out, size_t batch, Workspace& ws) {
  std::fill(y, y + batch * out, 0.0f);
  matvecBf16(w.data(), x, y, in, out, batch, ws.row.data());
}

float silu(float v) { return v / (1.0f + std::exp(-v)); }

// y[n][hidden] = this rank's columns of one MLP on x[n][hidden].
void runMlp(const Mlp& m, size_t hidden, const float* x, size_t n, float* y,
            Workspace& ws) {
  float* gate = ws.gate.data();
  float* up = ws.up.data();
  multiply(m.gate, x, gate, hidden, m.width, n, ws);
  multiply(m.up, x, up, hidden, m.width, n, ws);
  for (size_t i = 0; i < n * m.width; ++i) gate[i] = silu(gate[i]) * up[i];
  multiply(m.down, gate, y, m.width, hidden, n, ws);
}

void softmax(float* v, size_t n) {
  const float top = *std::max_element(v, v + n);
  float sum = 0;
  for (size_t i = 0; i < n; ++i) sum += v[i] = std::exp(v[i] - top);
  for (size_t i = 0; i < n; ++i) v[i] /= sum;
}

// Sequence b's routed experts and their weights.
struct Routed {
  size_t sequence;
  float weight;
};

}  // namespace

Workspace::Workspace(const ShardDims& d)
    : q(d.batch * d.qDim()),
      k(d.batch * d.kvDim()),
      v(d.batch * d.kvDim()),
      attention(d.batch * d.qDim()),
      scores(std::max<size_t>(1, d.fullHeads / d.fullKvHeads) * d.context),
      cacheRow(d.headDim),
      row(std::max({d.hidden, d.qDim(), d.kvDim(), widestMlp(d), d.experts,
                    d.lastStage ? d.vocab : 0})),
      gate(d.batch * widestMlp(d)),
      up(d.batch * widestMlp(d)),
      routerLogits(d.batch * d.experts),
      expertIn(d.moe() ? d.batch * d.hidden : 0),
      expertOut(d.moe() ? d.batch * d.hidden : 0) {}

void rmsNorm(const float* x, const float* w, float* y, size_t n, size_t batch,
             float eps) {
  for (size_t b = 0; b < batch; ++b) {
    const float* xb = x + b * n;
    float sum = 0;
    for (size_t i = 0; i < n; ++i) sum += xb[i] * xb[i];
    const float scale = 1.0f / std::sqrt(sum / static_cast<float>(n) + eps);
    float* yb = y + b * n;
    for (size_t i = 0; i < n; ++i) yb[i] = xb[i] * scale * w[i];
  }
}

void attentionShard(LayerShard& layer, const ShardDims& d, const float* h,
                    size_t slot, float* out, Workspace& ws) {
  const size_t hd = d.headDim;
  const size_t qDim = d.qDim();
  const size_t kvDim = d.kvDim();
  multiply(layer.wq, h, ws.q.data(), d.hidden, qDim, d.batch, ws);
  multiply(layer.wk, h, ws.k.data(), d.hidden, kvDim, d.batch, ws);
  multiply(layer.wv, h, ws.v.data(), d.hidden, kvDim, d.batch, ws);

  const size_t group = d.fullHeads / d.fullKvHeads;  // query heads per KV
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  float* row = ws.cacheRow.data();
  for (size_t b = 0; b < d.batch; ++b) {
    uint16_t* keys = layer.keys.data() + b * d.context * kvDim;
    uint16_t* values = layer.values.data() + b * d.context * kvDim;
    for (size_t i = 0; i < kvDim; ++i) {
      keys[slot * kvDim + i] = floatToBf16(ws.k[b * kvDim + i]);
      values[slot * kvDim + i] = floatToBf16(ws.v[b * kvDim + i]);
    }
    for (size_t g = 0; g < d.kvHeads; ++g) {
      // The query heads held that read KV head g: a run of them.
      const size_t kvGlobal = d.firstKvHead + g;
      const size_t lo = std::max(kvGlobal * group, d.firstHead) - d.firstHead;
      const size_t hi =
          std::min((kvGlobal + 1) * group, d.firstHead + d.heads) - d.firstHead;
      if (lo >= hi) continue;
      const size_t nq = hi - lo;
      const float* q = ws.q.data() + b * qDim + lo * hd;
      for (size_t p = 0; p < d.context; ++p) {
        const uint16_t* key = keys + p * kvDim + g * hd;
        for (size_t j = 0; j < hd; ++j) row[j] = bf16ToFloat(key[j]);
        for (size_t i = 0; i < nq; ++i) {
          const float* qi = q + i * hd;
          float dot = 0;
          for (size_t j = 0; j < hd; ++j) dot += qi[j] * row[j];
          ws.scores[i * d.context + p] = dot * scale;
        }
      }
      for (size_t i = 0; i < nq; ++i)
        softmax(ws.scores.data() + i * d.context, d.context);
      float* o = ws.attention.data() + b * qDim + lo * hd;
      std::fill(o, o + nq * hd, 0.0f);
      for (size_t p = 0; p < d.context; ++p) {
        const uint16_t* value = values + p * kvDim + g * hd;
        for (size_t j = 0; j < hd; ++j) row[j] = bf16ToFloat(value[j]);
        for (size_t i = 0; i < nq; ++i) {
          const float w = ws.scores[i * d.context + p];
          float* oi = o + i * hd;
          for (size_t j = 0; j < hd; ++j) oi[j] += w * row[j];
        }
      }
    }
  }
  multiply(layer.wo, ws.attention.data(), out, qDim, d.hidden, d.batch, ws);
}

void mlpShard(const LayerShard& layer, const ShardDims& d, const float* h,
              float* out, Workspace& ws) {
  if (!d.moe()) {
    runMlp(layer.dense, d.hidden, h, d.batch, out, ws);
    return;
  }
  // Every rank of the stage routes alike: the router is whole and h is the
  // same on each (the all-reduces give every rank the same sums).
  const size_t E = d.experts;
  multiply(layer.router, h, ws.routerLogits.data(), d.hidden, E, d.batch, ws);
  std::vector<std::vector<Routed>> chosen(E);
  std::vector<size_t> order(E);
  std::vector<float> weights(d.expertsPerToken);
  for (size_t b = 0; b < d.batch; ++b) {
    const float* logits = ws.routerLogits.data() + b * E;
    std::iota(order.begin(), order.end(), size_t{0});
    std::partial_sort(
        order.begin(), order.begin() + static_cast<long>(d.expertsPerToken),
        order.end(), [logits](size_t a, size_t c) {
          return logits[a] > logits[c] || (logits[a] == logits[c] && a < c);
        });
    for (size_t i = 0; i < d.expertsPerToken; ++i)
      weights[i] = logits[order[i]];
    softmax(weights.data(), weights.size());
    for (size_t i = 0; i < d.expertsPerToken; ++i)
      chosen[order[i]].push_back({b, weights[i]});
  }
  // Each chosen expert once, over the sequences that chose it: its weights
  // are read once per step, as a batched decode reads them.
  std::fill(out, out + d.batch * d.hidden, 0.0f);
  for (size_t e = 0; e < E; ++e) {
    const size_t n = chosen[e].size();
    if (n == 0) continue;
    for (size_t i = 0; i < n; ++i)
      std::copy_n(h + chosen[e][i].sequence * d.hidden, d.hidden,
                  ws.expertIn.data() + i * d.hidden);
    runMlp(layer.experts[e], d.hidden, ws.expertIn.data(), n,
           ws.expertOut.data(), ws);
    for (size_t i = 0; i < n; ++i) {
      float* o = out + chosen[e][i].sequence * d.hidden;
      const float* y = ws.expertOut.data() + i * d.hidden;
      const float w = chosen[e][i].weight;
      for (size_t j = 0; j < d.hidden; ++j) o[j] += w * y[j];
    }
  }
  if (layer.shared.width > 0) {
    runMlp(layer.shared, d.hidden, h, d.batch, ws.expertOut.data(), ws);
    for (size_t i = 0; i < d.batch * d.hidden; ++i) out[i] += ws.expertOut[i];
  }
}

void logitsShard(const RankShard& s, const float* h, float* logits,
                 Workspace& ws) {
  const ShardDims& d = s.dims;
  multiply(s.head, h, logits, d.hidden, d.vocab, d.batch, ws);
}

}  // namespace mcl_example
