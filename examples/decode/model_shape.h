// The model the example decoder runs: its shape, read from a Hugging Face
// config.json (Llama, Qwen, Mistral; Mixtral and Qwen-MoE experts), and
// how a layout of --tp ranks per stage and --pp stages divides it.
#pragma once

#include <stdexcept>
#include <string>

namespace mcl_example {

// A config or a layout the decoder cannot run: the message names the field
// (or flag) and its value.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ModelShape {
  int hidden = 0;
  int layers = 0;
  int heads = 0;
  int kvHeads = 0;
  int headDim = 0;
  int intermediate = 0;  // the dense MLP's
  int vocab = 0;
  bool tiedEmbeddings = false;
  float rmsNormEps = 1e-5f;
  // Mixture of experts (0 experts: dense). Every layer is an MoE layer.
  int experts = 0;
  int expertsPerToken = 0;
  int expertIntermediate = 0;
  int sharedIntermediate = 0;  // one always-run shared expert; 0: none

  bool moe() const { return experts > 0; }
};

// Throws ConfigError naming the file and the field missing or out of range.
ModelShape readModelShape(const std::string& path);

// Throws ConfigError naming the field (and value) that `tp` ranks per stage
// do not divide, or the layers that `pp` stages outnumber. A TP degree
// above the KV heads is allowed when it is a multiple of them: each rank
// then holds one KV head (replicated), as mcl-perf plan assumes.
void checkLayout(const ModelShape& m, int tp, int pp);

// The layers stage `stage` of `pp` holds: as even as possible, the earlier
// stages taking the extra ones.
struct LayerRange {
  int first = 0;
  int count = 0;
};
LayerRange stageLayers(const ModelShape& m, int pp, int stage);

}  // namespace mcl_example
