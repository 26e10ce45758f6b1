// The shape of a model, as `mcl-perf plan` needs it: what each layer holds,
// what one token reads, and what the KV cache costs, read from a Hugging
// Face config.json (Llama, Qwen2/3, Mistral, Mixtral, Qwen-MoE,
// DeepSeek-V3-style MoE with latent attention) or taken from a preset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mcl::perf::plan {

struct ModelShape {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kvHeads = 0;
  int headDim = 0;
  int intermediate = 0;  // the dense MLP's
  int vocab = 0;
  bool tiedEmbeddings = false;
  // Mixture of experts: 0 experts for a dense model. The first
  // denseLayers layers have a dense MLP (DeepSeek's first_k_dense_replace).
  int experts = 0;
  int expertsPerToken = 0;
  int expertIntermediate = 0;
  int sharedIntermediate = 0;  // the always-on shared expert(s), summed
  int denseLayers = 0;
  // DeepSeek's multi-head latent attention: KV cached as one compressed
  // vector per token (kvLoraRank + ropeDim); 0 for ordinary attention.
  int kvLoraRank = 0;
  int qLoraRank = 0;
  int ropeDim = 0;
  int nopeDim = 0;
  int valueDim = 0;

  bool moe() const { return experts > 0; }
  bool latentAttention() const { return kvLoraRank > 0; }
  int moeLayers() const { return moe() ? layers - denseLayers : 0; }
};

// Parameters (elements), by where they sit.
struct ParameterCounts {
  double attentionPerLayer = 0;
  double denseMlpPerLayer = 0;
  double expertPerLayer = 0;  // one routed expert
  double sharedPerLayer = 0;  // the shared expert(s) and the router
  double embedding = 0;       // vocab x hidden
  double total = 0;           // every weight, the head counted once if tied
};
ParameterCounts countParameters(const ModelShape& m);

// One layer's weights on a rank of a tensor-parallel group of tp, split as
// Megatron splits them: attention by heads (k and v held whole per KV head
// held, one each where tp exceeds the KV heads; latent attention's shared
// down-projection on every rank), the shared expert by columns, the router
// whole on every rank.
double attentionPerRank(const ModelShape& m, int tp);
double sharedPerRank(const ModelShape& m, int tp);

// Reads a config.json's text. Throws std::runtime_error naming the file and
// the field that is missing or out of range.
ModelShape parseModelConfig(const std::string& jsonText,
                            const std::string& name);
// A file path or a preset name (modelPresetNames()).
ModelShape loadModel(const std::string& pathOrPreset);
std::vector<std::string> modelPresetNames();

// KV cache elements one token adds in one layer, on a rank holding
// kvHeadsHeld of the KV heads (latent attention: the compressed vector,
// the same on every rank).
double kvElementsPerTokenLayer(const ModelShape& m, int kvHeadsHeld);

// One kind of weight matrix a decode step multiplies by, on a rank of a
// tensor-parallel group of tp: its width (the columns each of its rows
// adds to) and how many of its weights one token reads, over all layers
// (routed experts: those one token chooses).
struct MatrixUse {
  size_t columns = 0;
  double weightsPerToken = 0;
};
std::vector<MatrixUse> decodeMatrices(const ModelShape& m, int tp);

// Expected distinct routed experts one layer reads for a batch of
// sequences, each choosing expertsPerToken of the experts (uniform
// routing: the model's known error, docs/planning.md).
double expertsTouched(const ModelShape& m, int batch);

}  // namespace mcl::perf::plan
