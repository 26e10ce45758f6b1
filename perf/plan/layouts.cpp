#include "plan/layouts.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace mcl::perf::plan {

namespace {

constexpr double kCacheElementBytes = 2;  // KV cache in fp16/bf16
constexpr double kActivationBytes = 2;    // messages in bf16
constexpr int kAllReducesPerLayer = 2;    // after attention and the MLP
constexpr double kArgmaxEntryBytes = 16;  // (value, index) per rank

std::string gb(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
  return text;
}

// Why tensor parallelism over t cannot split this model, or "".
std::string tpRefusal(const ModelShape& m, int t) {
  auto no = [&](const char* what, int value) {
    return "TP " + std::to_string(t) + " does not divide the " +
           std::to_string(value) + " " + what;
  };
  if (m.heads % t != 0) return no("attention heads", m.heads);
  if (!m.latentAttention() && m.kvHeads % t != 0 && t % m.kvHeads != 0)
    return no("KV heads", m.kvHeads);
  if ((!m.moe() || m.denseLayers > 0) && m.intermediate % t != 0)
    return no("MLP columns (intermediate_size)", m.intermediate);
  if (m.moe() && m.expertIntermediate % t != 0)
    return no("expert MLP columns (moe_intermediate_size)",
              m.expertIntermediate);
  if (m.moe() && m.sharedIntermediate % t != 0)
    return no("shared expert's columns", m.sharedIntermediate);
  if (m.vocab % t != 0) return no("vocabulary's rows of the head", m.vocab);
  return "";
}

// The weight rate of rank r of stage s while the stage decodes: its
// ranks on the same host decode at once and share that host's bandwidth
// (the other stages wait their turn).
double stageRate(const ClusterFigures& c, int tp, int s, int r) {
  const RankFigures& f = c.ranks[s * tp + r];
  int busy = 0;
  for (int k = 0; k < tp; ++k) busy += c.ranks[s * tp + k].host == f.host;
  return weightRateIn(f, tp, busy);
}

// Why the first `used` ranks cannot run together, or "": one of them is on
// no cable (planning order puts those last).
std::string offCable(const ClusterFigures& c, int used) {
  for (int r = 0; r < used; ++r)
    if (!c.ranks[r].onCable)
      return "rank " + std::to_string(c.ranks[r].rank) + " (" +
             c.ranks[r].host +
             ") is on no cable: it reaches the others over the LAN only "
             "(mcl-perf topo --check says how to cable it)";
  return "";
}

// Layers per stage, in proportion to each stage's speed (the slowest rank
// of its tensor-parallel group), the earlier stages taking what rounding
// leaves over: alike stages split evenly, earlier first.
std::vector<int> splitLayers(const ModelShape& m, const ClusterFigures& c,
                             int tp, int pp) {
  std::vector<double> speed(pp);
  double total = 0;
  for (int s = 0; s < pp; ++s) {
    double slowest = stageRate(c, tp, s, 0);
    for (int k = 1; k < tp; ++k)
      slowest = std::min(slowest, stageRate(c, tp, s, k));
    speed[s] = slowest;
    total += slowest;
  }
  // Stages within 10% of the fastest count as alike (measurement noise
  // must not split alike Macs unevenly).
  const double fastest = *std::max_element(speed.begin(), speed.end());
  total = 0;
  for (double& v : speed) {
    if (v * 1.1 >= fastest) v = fastest;
    total += v;
  }
  std::vector<int> layers(pp, 0);
  int given = 0;
  std::vector<std::pair<double, int>> remainder;
  for (int s = 0; s < pp; ++s) {
    const double share = m.layers * speed[s] / total;
    layers[s] = std::max(1, static_cast<int>(std::floor(share + 1e-9)));
    given += layers[s];
    remainder.push_back({share - std::floor(share + 1e-9), s});
  }
  std::stable_sort(remainder.begin(), remainder.end(),
                   [](auto a, auto b) { return a.first > b.first + 1e-9; });
  for (size_t i = 0; given < m.layers; i = (i + 1) % remainder.size()) {
    ++layers[remainder[i].second];
    ++given;
  }
  for (int s = pp - 1; given > m.layers; s = s == 0 ? pp - 1 : s - 1)
    if (layers[s] > 1) {
      --layers[s];
      --given;
    }
  return layers;
}

struct Costs {
  const ModelShape& m;
  const ParameterCounts p;
  const PlanInputs& in;
  const double perWeight;
};

// Of `layers` layers from global layer `first`: those with routed experts
// (DeepSeek's first layers are dense).
int moeLayersIn(const ModelShape& m, int first, int layers) {
  if (!m.moe()) return 0;
  return std::max(0, first + layers - std::max(first, m.denseLayers));
}

// One rank's weights in elements: its share of its stage's layers, the
// embedding on the first stage, its share of the head on the last.
double weightElements(const Costs& k, int tp, int pp, int stage, int first,
                      int layers) {
  const ModelShape& m = k.m;
  const int moeLayers = moeLayersIn(m, first, layers);
  double e =
      layers * attentionPerRank(m, tp) +
      (layers - moeLayers) * k.p.denseMlpPerLayer / tp +
      moeLayers * (m.experts * k.p.expertPerLayer / tp + sharedPerRank(m, tp));
  if (stage == 0) e += k.p.embedding;
  const bool headSeparate = !(m.tiedEmbeddings && tp == 1 && pp == 1);
  if (stage == pp - 1 && headSeparate) e += k.p.embedding / tp;
  return e;
}

// Parameters one sequence's token multiplies by in a rank's layers (its
// routed experts only), and those the batch reads (every expert any
// sequence chose).
struct LayerUse {
  double usedPerSequence = 0;
  double read = 0;
};

LayerUse layerUse(const Costs& k, int tp, int first, int layers, int batch) {
  const ModelShape& m = k.m;
  const int moeLayers = moeLayersIn(m, first, layers);
  LayerUse u;
  const double common = layers * attentionPerRank(m, tp) +
                        (layers - moeLayers) * k.p.denseMlpPerLayer / tp +
                        moeLayers * sharedPerRank(m, tp);
  const double expert = k.p.expertPerLayer / tp;
  u.usedPerSequence = common + moeLayers * m.expertsPerToken * expert;
  u.read = common + moeLayers * expertsTouched(m, batch) * expert;
  return u;
}

int kvHeadsHeld(const ModelShape& m, int tp) {
  return m.kvHeads >= tp ? m.kvHeads / tp : 1;
}

// Attention's multiply-adds x 2 per token per layer over `positions`
// cached tokens, on a rank holding heads / tp of the heads.
double attentionFlops(const ModelShape& m, int tp, double positions) {
  const double dim =
      m.latentAttention() ? m.kvLoraRank + m.ropeDim : double(m.headDim);
  return 2.0 * 2.0 * positions * (double(m.heads) / tp) * dim;
}

double allReduceUs(const ClusterFigures& c, int tp, double bytes) {
  return tp < 2 ? 0 : c.allReduce[tp - 2].at(bytes);
}

void predict(Layout& l, const Costs& k, const ClusterFigures& c,
             const std::vector<double>& freeShare) {
  const ModelShape& m = k.m;
  const PlanInputs& in = k.in;
  const int tp = l.tp;
  const int pp = l.pp;
  const double message = double(in.batch) * m.hidden * kActivationBytes;
  double stepUs = 0;
  double commUs = 0;
  for (int s = 0, first = 0; s < pp; first += l.stageLayers[s], ++s) {
    const int layers = l.stageLayers[s];
    const double weights = weightElements(k, tp, pp, s, first, layers);
    const LayerUse use = layerUse(k, tp, first, layers, in.batch);
    const double kvPerToken = layers *
                              kvElementsPerTokenLayer(m, kvHeadsHeld(m, tp)) *
                              kCacheElementBytes;
    const bool last = s == pp - 1;
    const double head = last ? k.p.embedding / tp : 0;
    const double read =
        (use.read + head) * k.perWeight + kvPerToken * in.context * in.batch;
    const double flops = 2.0 * in.batch * (use.usedPerSequence + head) +
                         in.batch * layers * attentionFlops(m, tp, in.context);
    double stageUs = 0;
    for (int r = 0; r < tp; ++r) {
      const RankFigures& f = c.ranks[s * tp + r];
      RankUse u;
      u.rank = f.rank;
      u.weightBytes = weights * k.perWeight;
      u.kvBytes = kvPerToken * in.context * in.batch;
      u.freeBytes = freeShare[s * tp + r];
      u.readBytesPerStep = read;
      u.computeS = std::max(read / stageRate(c, tp, s, r), flops / f.flopsPerS);
      stageUs = std::max(stageUs, u.computeS * 1e6);
      if (l.fits && u.weightBytes + u.kvBytes > u.freeBytes) {
        l.fits = false;
        l.whyNot = "rank " + std::to_string(f.rank) + " (" + f.host +
                   ") would hold " + gb(u.weightBytes + u.kvBytes) +
                   " (weights " + gb(u.weightBytes) + ", KV cache " +
                   gb(u.kvBytes) + ") with " + gb(u.freeBytes) + " usable";
      }
      l.ranks.push_back(u);
    }
    double stageComm =
        layers * kAllReducesPerLayer * allReduceUs(c, tp, message);
    if (last) stageComm += allReduceUs(c, tp, kArgmaxEntryBytes * tp);
    stepUs += stageUs + stageComm;
    commUs += stageComm;
  }
  if (pp > 1) {
    // The activations stage to stage, then the token ids back to the first.
    const double hops = (pp - 1) * c.hop.at(message) + c.hop.at(4.0 * in.batch);
    stepUs += hops;
    commUs += hops;
  }
  l.stepS = stepUs * 1e-6;
  l.commS = commUs * 1e-6;
  l.decodeTokensPerS = l.stepS > 0 ? in.batch / l.stepS : 0;
}

// A prompt of in.prompt tokens in chunks: each chunk reads every weight of
// every stage once (of the experts, those the chunk's tokens choose: for
// any long prompt, all of them) and
// multiplies by them once per token; stages run one after the other.
void predictPrefill(Layout& l, const Costs& k, const ClusterFigures& c) {
  const ModelShape& m = k.m;
  const PlanInputs& in = k.in;
  double us = 0;
  for (int done = 0; done < in.prompt;) {
    const int chunk = std::min(in.prefillChunk, in.prompt - done);
    const double message = double(chunk) * m.hidden * kActivationBytes;
    for (int s = 0, first = 0; s < l.pp; first += l.stageLayers[s], ++s) {
      const int layers = l.stageLayers[s];
      const LayerUse use = layerUse(k, l.tp, first, layers, chunk);
      const double head = s == l.pp - 1 ? k.p.embedding / l.tp : 0;
      // Attention over the positions before each token: done + chunk / 2
      // on average.
      const double flops =
          2.0 * chunk * (use.usedPerSequence + head) +
          chunk * layers * attentionFlops(m, l.tp, done + chunk / 2.0);
      const double read = (use.read + head) * k.perWeight;
      double stage = 0;
      for (int r = 0; r < l.tp; ++r) {
        const RankFigures& f = c.ranks[s * l.tp + r];
        stage = std::max(stage, std::max(read / stageRate(c, l.tp, s, r),
                                         flops / f.flopsPerS) *
                                    1e6);
      }
      us +=
          stage + layers * kAllReducesPerLayer * allReduceUs(c, l.tp, message);
      if (s + 1 < l.pp) us += c.hop.at(message);
    }
    done += chunk;
  }
  l.prefillS = us * 1e-6;
}

std::string layoutName(int tp, int pp) {
  if (tp == 1 && pp == 1) return "1 rank";
  if (pp == 1) return "tp" + std::to_string(tp);
  if (tp == 1) return "pp" + std::to_string(pp);
  return "tp" + std::to_string(tp) + "xpp" + std::to_string(pp);
}

}  // namespace

double Layout::memoryPerRank() const {
  double most = 0;
  for (const RankUse& r : ranks)
    most = std::max(most, r.weightBytes + r.kvBytes);
  return most;
}

double Layout::headroom() const {
  double least = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const double left =
        ranks[i].freeBytes - ranks[i].weightBytes - ranks[i].kvBytes;
    least = i == 0 ? left : std::min(least, left);
  }
  return least;
}

double bytesPerWeight(const PlanInputs& in) {
  if (in.bits >= 16) return 2;
  return in.bits / 8.0 + 4.0 / in.groupSize;
}

std::vector<Layout> planLayouts(const ModelShape& m, const ClusterFigures& c,
                                const PlanInputs& in) {
  const Costs k{m, countParameters(m), in, bytesPerWeight(in)};
  std::vector<double> freeShare;
  for (const RankFigures& f : c.ranks)
    freeShare.push_back(f.freeBytes * (1 - in.reserve));
  std::vector<Layout> all;
  const int n = static_cast<int>(c.ranks.size());
  for (int used = 1; used <= n; ++used)
    for (int tp = used; tp >= 1; --tp) {
      if (used % tp != 0) continue;
      Layout l;
      l.tp = tp;
      l.pp = used / tp;
      l.name = layoutName(l.tp, l.pp);
      l.fits = true;
      if (l.pp > m.layers) {
        l.fits = false;
        l.whyNot = "more stages than the model's " + std::to_string(m.layers) +
                   " layers";
        all.push_back(l);
        continue;
      }
      if (std::string why = tpRefusal(m, tp); !why.empty()) {
        l.fits = false;
        l.whyNot = why;
        all.push_back(l);
        continue;
      }
      if (std::string why = offCable(c, used); !why.empty()) {
        l.fits = false;
        l.whyNot = why;
        all.push_back(l);
        continue;
      }
      l.stageLayers = splitLayers(m, c, l.tp, l.pp);
      predict(l, k, c, freeShare);
      if (in.prompt > 0) predictPrefill(l, k, c);
      all.push_back(l);
    }
  std::stable_sort(all.begin(), all.end(),
                   [](const Layout& a, const Layout& b) {
                     if (a.fits != b.fits) return a.fits;
                     return a.decodeTokensPerS > b.decodeTokensPerS;
                   });
  return all;
}

std::string planVerdict(const std::vector<Layout>& layouts, const ModelShape& m,
                        const PlanInputs& in) {
  const auto fit = std::count_if(layouts.begin(), layouts.end(),
                                 [](const Layout& l) { return l.fits; });
  if (fit == 0) {
    std::string why = "nothing fits: the weights are " +
                      gb(countParameters(m).total * bytesPerWeight(in)) +
                      " at " + std::to_string(in.bits) + " bits";
    // The layout over the most ranks says most about what is missing.
    const Layout* widest = nullptr;
    for (const Layout& l : layouts)
      if (widest == nullptr || l.tp * l.pp > widest->tp * widest->pp)
        widest = &l;
    if (widest != nullptr) why += "; " + widest->name + ": " + widest->whyNot;
    return why;
  }
  const Layout& best = layouts.front();
  char text[256];
  std::snprintf(text, sizeof text,
                "%s: the fastest decode of the %d layouts that fit, %.1f "
                "tokens/s, %.0f%% of each step on the links",
                best.name.c_str(), static_cast<int>(fit), best.decodeTokensPerS,
                best.commShare() * 100);
  return text;
}

}  // namespace mcl::perf::plan
