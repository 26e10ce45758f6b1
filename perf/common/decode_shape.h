// The shape of one generated token's communication in model-parallel
// decoding, shared by `mcl-perf tp` and `mcl-perf pp`: a model (a preset,
// or --layers and --hidden), the batch sizes, the element type and the
// all-reduces per layer.
#pragma once

#include <mcl/mcl.h>

#include <cstddef>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace mcl::perf {

struct ModelPreset {
  const char* name;  // "llama-70b"
  const char* what;  // "Llama 3 70B-style"
  int layers;
  int hidden;
};

// The presets, the first the default.
const std::vector<ModelPreset>& modelPresets();

// One model measured: a preset's, or the one --layers/--hidden describe
// (named "custom").
struct DecodeModel {
  std::string name;
  int layers = 0;
  int hidden = 0;
};

struct DecodeShape {
  std::vector<DecodeModel> models;   // --preset (a list, or all)
  std::vector<int> batches{1};       // --batch (a list)
  mclDataType_t type = mclBfloat16;  // --dtype
  int allreducesPerLayer = 2;        // --allreduces-per-layer (tp)
  int prompt = 0;                    // --prompt: tokens to prefill, 0 none
  int layersGiven = 0;               // --layers, 0 when not given
  int hiddenGiven = 0;               // --hidden, 0 when not given
  bool presetGiven = false;
};

// A prompt is prefilled in steps of at most this many tokens, as mlx-lm
// does: each step's messages are chunk x hidden elements.
constexpr int kPrefillChunkTokens = 2048;

// The bytes of one token's activations (batch x hidden elements).
size_t activationBytes(const DecodeModel& model, int batch, mclDataType_t type);

// --preset, --layers, --hidden, --batch, --dtype and (tp, perLayer)
// --allreduces-per-layer.
void addDecodeShapeFlags(CLI::App* command, DecodeShape* shape, bool perLayer);

// After the flags: the models to run (the presets named, or --layers and
// --hidden, which override a preset's) and the checks that involve several
// flags: the buffers must fit (a message naming the flags otherwise).
bool finishDecodeShape(DecodeShape* shape, std::string* error);

// "bf16", "fp16", "float".
const char* decodeTypeName(mclDataType_t type);

}  // namespace mcl::perf
