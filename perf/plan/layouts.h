// Every way to run a model on the first k ranks of a cluster (one rank;
// tensor-parallel over k; pipeline-parallel over k; both), what each rank
// must hold, and the decode and prefill speed each should reach: the
// prediction of `mcl-perf plan` (docs/planning.md gives each term).
#pragma once

#include <string>
#include <vector>

#include "plan/cluster_figures.h"
#include "plan/model_shape.h"

namespace mcl::perf::plan {

struct PlanInputs {
  int bits = 16;            // weight precision: 16 (bf16), 8 or 4
  int groupSize = 64;       // quantized: elements per scale and bias
  int context = 4096;       // tokens in the KV cache
  int prompt = 2048;        // prefill: tokens of the prompt
  int batch = 1;            // sequences decoded together
  int prefillChunk = 2048;  // tokens per prefill step, as mlx-lm's
  // Share of each rank's free memory kept for activations, the runtime and
  // the system.
  double reserve = 0.10;
};

struct RankUse {
  int rank = 0;
  double weightBytes = 0;
  double kvBytes = 0;
  double freeBytes = 0;
  double readBytesPerStep = 0;  // weights and KV read per decode step
  double computeS = 0;          // its share of one decode step
};

struct Layout {
  std::string name;  // "1 rank", "tp2", "pp2", "tp2xpp2"
  int tp = 1;
  int pp = 1;
  std::vector<int> stageLayers;
  std::vector<RankUse> ranks;  // stage by stage, tp ranks each
  bool fits = false;
  std::string whyNot;  // when it cannot run: the reason, naming the rank
  double stepS = 0;    // one decode step (batch tokens)
  double commS = 0;    // of it: all-reduces and hops
  double decodeTokensPerS = 0;
  double prefillS = 0;
  double commShare() const { return stepS > 0 ? commS / stepS : 0; }
  double memoryPerRank() const;  // the largest rank's weights + KV
  // The least usable memory any rank has left (negative: short by that).
  double headroom() const;
};

// Bytes per weight at `bits` with MLX's quantization (a scale and a bias of
// 16 bits per group).
double bytesPerWeight(const PlanInputs& in);

// Every layout on 1..n ranks, runnable or not (whyNot says), the fastest
// runnable one first, then the rest by decode speed, then those that
// cannot run.
std::vector<Layout> planLayouts(const ModelShape& m, const ClusterFigures& c,
                                const PlanInputs& in);

// One line: why the first layout is the one to run, or why none can.
std::string planVerdict(const std::vector<Layout>& layouts, const ModelShape& m,
                        const PlanInputs& in);

}  // namespace mcl::perf::plan
