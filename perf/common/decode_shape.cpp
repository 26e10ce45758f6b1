#include "common/decode_shape.h"

#include <mcl/mcl.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/flag_sets.h"

namespace mcl::perf {

namespace {

constexpr int kMaxLayers = 4096;
constexpr int kMaxHidden = 1 << 20;
constexpr int kMaxBatch = 1 << 16;
constexpr int kMaxPerLayer = 16;
// One layer's buffer, and all of a run's: beyond these the numbers say
// nothing about decoding (a layer's activations are kilobytes to
// megabytes) and the memory may not be there.
constexpr uint64_t kMaxLayerBytes = uint64_t{1} << 30;
constexpr uint64_t kMaxTotalBytes = uint64_t{16} << 30;

std::string presetNames() {
  std::string names;
  for (const ModelPreset& p : modelPresets())
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

// "1,4,16" into values within [1, hi]; throws naming the flag.
std::vector<int> parseCountList(const std::string& text, const char* flag,
                                int hi) {
  std::vector<int> values;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > hi)
      throw CLI::ValidationError(std::string("invalid value '") + item +
                                 "' for " + flag +
                                 ": expected integers from 1 to " +
                                 std::to_string(hi) + ", separated by commas");
    values.push_back(static_cast<int>(v));
    start = comma + 1;
  }
  return values;
}

}  // namespace

const std::vector<ModelPreset>& modelPresets() {
  static const std::vector<ModelPreset> presets = {
      {"llama-70b", "Llama 3 70B-style", 80, 8192},
      {"deepseek-v3", "DeepSeek-V3 / Kimi K2-style", 61, 7168},
      {"qwen-32b", "Qwen 2.5 32B-style", 64, 5120},
      {"llama-8b", "Llama 3 8B-style", 32, 4096},
      {"llama-405b", "Llama 3 405B-style", 126, 16384},
  };
  return presets;
}

size_t activationBytes(const DecodeModel& model, int batch,
                       mclDataType_t type) {
  return size_t(model.hidden) * size_t(batch) * typeSize(type);
}

const char* decodeTypeName(mclDataType_t type) {
  switch (type) {
    case mclBfloat16:
      return "bf16";
    case mclFloat16:
      return "fp16";
    default:
      return "float";
  }
}

void addDecodeShapeFlags(CLI::App* command, DecodeShape* shape, bool perLayer) {
  command
      ->add_option_function<std::string>(
          "--preset",
          [shape](const std::string& text) {
            shape->models.clear();
            shape->presetGiven = true;
            const bool all = text == "all";
            size_t start = 0;
            while (!all && start <= text.size()) {
              size_t comma = text.find(',', start);
              if (comma == std::string::npos) comma = text.size();
              const std::string name = text.substr(start, comma - start);
              bool found = false;
              for (const ModelPreset& p : modelPresets())
                if (name == p.name) {
                  shape->models.push_back({p.name, p.layers, p.hidden});
                  found = true;
                }
              if (!found)
                throw CLI::ValidationError(
                    "unknown preset '" + name + "' for --preset: expected " +
                    presetNames() + " or all, separated by commas");
              start = comma + 1;
            }
            if (all)
              for (const ModelPreset& p : modelPresets())
                shape->models.push_back({p.name, p.layers, p.hidden});
          },
          "the model: " + presetNames() +
              ", or all, separated by commas (default llama-70b: 80 layers of "
              "hidden 8192)")
      ->type_name("NAME");
  addIntFlag(
      command, "--layers", 1, kMaxLayers,
      [shape](int n) { shape->layersGiven = n; },
      "layers of the model (instead of a preset's)");
  addIntFlag(
      command, "--hidden", 1, kMaxHidden,
      [shape](int n) { shape->hiddenGiven = n; },
      "hidden size: elements per token per layer (instead of a preset's)");
  command
      ->add_option_function<std::string>(
          "--batch",
          [shape](const std::string& text) {
            shape->batches = parseCountList(text, "--batch", kMaxBatch);
          },
          "tokens decoded at once, or a list of them: 1,4,16 (default 1)")
      ->type_name("N[,N...]");
  command
      ->add_option_function<std::string>(
          "--dtype",
          [shape](const std::string& text) {
            const auto types = parseTypes(text);
            if (!types || types->size() != 1 ||
                (types->front() != mclBfloat16 &&
                 types->front() != mclFloat16 && types->front() != mclFloat32))
              throw CLI::ValidationError("unknown type '" + text +
                                         "' for --dtype: expected bf16, fp16 "
                                         "or float");
            shape->type = types->front();
          },
          "the activations' type: bf16 (default), fp16 or float")
      ->type_name("TYPE");
  addIntFlag(
      command, "--prompt", 1, 1 << 20, [shape](int n) { shape->prompt = n; },
      "also time the prefill of a prompt of N tokens: the same messages "
      "with N x hidden elements, in steps of at most 2048 tokens as mlx-lm "
      "prefills");
  if (perLayer)
    addIntFlag(
        command, "--allreduces-per-layer", 1, kMaxPerLayer,
        [shape](int n) { shape->allreducesPerLayer = n; },
        "all-reduces per layer (default 2: after attention and after the "
        "MLP)");
}

bool finishDecodeShape(DecodeShape* shape, std::string* error) {
  if (shape->models.empty()) {
    const ModelPreset& p = modelPresets().front();
    shape->models.push_back({p.name, p.layers, p.hidden});
  }
  if (shape->layersGiven || shape->hiddenGiven) {
    if (shape->models.size() > 1) {
      *error =
          "--layers and --hidden describe one model: name one --preset with "
          "them, or none";
      return false;
    }
    DecodeModel& m = shape->models.front();
    if (!shape->presetGiven) m.name = "custom";
    if (shape->layersGiven) m.layers = shape->layersGiven;
    if (shape->hiddenGiven) m.hidden = shape->hiddenGiven;
    if (shape->presetGiven) m.name += " (changed)";
  }
  for (const DecodeModel& m : shape->models) {
    const uint64_t chunk = activationBytes(
        m, std::min(shape->prompt, kPrefillChunkTokens), shape->type);
    if (chunk > kMaxLayerBytes) {
      *error = "--prompt " + std::to_string(shape->prompt) + ": a step of " +
               std::to_string(std::min(shape->prompt, kPrefillChunkTokens)) +
               " tokens x --hidden " + std::to_string(m.hidden) + " needs " +
               std::to_string(chunk >> 20) + " MiB: at most 1 GiB";
      return false;
    }
  }
  for (const DecodeModel& m : shape->models)
    for (int batch : shape->batches) {
      const uint64_t layer = activationBytes(m, batch, shape->type);
      const uint64_t total = layer * uint64_t(m.layers);
      if (layer > kMaxLayerBytes || total > kMaxTotalBytes) {
        *error = "--hidden " + std::to_string(m.hidden) + " x --batch " +
                 std::to_string(batch) + " x " + decodeTypeName(shape->type) +
                 " x --layers " + std::to_string(m.layers) + " needs " +
                 std::to_string(total >> 20) +
                 " MiB of buffers: at most 1 GiB per layer and 16 GiB in all";
        return false;
      }
    }
  return true;
}

}  // namespace mcl::perf
