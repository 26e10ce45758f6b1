#include "plan/model_shape.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace mcl::perf::plan {

namespace {

using nlohmann::json;

struct Preset {
  const char* name;
  const char* config;  // the fields of the model's published config.json
};

// The published configs' fields that matter here (Hugging Face, read
// 2026-12): the same parser reads them as it reads a user's file.
const Preset kPresets[] = {
    {"llama-8b",
     R"({"num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":32,
        "num_key_value_heads":8,"intermediate_size":14336,
        "vocab_size":128256})"},
    {"llama-70b",
     R"({"num_hidden_layers":80,"hidden_size":8192,"num_attention_heads":64,
        "num_key_value_heads":8,"intermediate_size":28672,
        "vocab_size":128256})"},
    {"llama-405b",
     R"({"num_hidden_layers":126,"hidden_size":16384,
        "num_attention_heads":128,"num_key_value_heads":8,
        "intermediate_size":53248,"vocab_size":128256})"},
    {"qwen-32b",
     R"({"num_hidden_layers":64,"hidden_size":5120,"num_attention_heads":40,
        "num_key_value_heads":8,"intermediate_size":27648,
        "vocab_size":152064})"},
    {"mixtral-8x7b",
     R"({"num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":32,
        "num_key_value_heads":8,"intermediate_size":14336,"vocab_size":32000,
        "num_local_experts":8,"num_experts_per_tok":2})"},
    {"qwen3-30b-a3b",
     R"({"num_hidden_layers":48,"hidden_size":2048,"num_attention_heads":32,
        "num_key_value_heads":4,"head_dim":128,"intermediate_size":6144,
        "vocab_size":151936,"num_experts":128,"num_experts_per_tok":8,
        "moe_intermediate_size":768})"},
    {"deepseek-v3",
     R"({"num_hidden_layers":61,"hidden_size":7168,"num_attention_heads":128,
        "num_key_value_heads":128,"intermediate_size":18432,
        "vocab_size":129280,"n_routed_experts":256,"num_experts_per_tok":8,
        "moe_intermediate_size":2048,"n_shared_experts":1,
        "first_k_dense_replace":3,"q_lora_rank":1536,"kv_lora_rank":512,
        "qk_rope_head_dim":64,"qk_nope_head_dim":128,"v_head_dim":128})"},
};

class Fields {
 public:
  Fields(const json& doc, const std::string& name) : doc_(doc), name_(name) {}

  // A whole number within [lo, hi]; `fallback` when absent (-1: required).
  int count(const char* key, long long lo, long long hi,
            long long fallback = -1) const {
    auto it = doc_.find(key);
    if (it == doc_.end() || it->is_null()) {
      if (fallback >= 0) return static_cast<int>(fallback);
      fail(std::string("has no \"") + key + "\"");
    }
    if (!it->is_number_integer() && !it->is_number_unsigned())
      fail(std::string("\"") + key + "\" is not a whole number: " + it->dump());
    const long long v = it->get<long long>();
    if (v < lo || v > hi)
      fail(std::string("\"") + key + "\" is " + std::to_string(v) +
           ": expected " + std::to_string(lo) + " to " + std::to_string(hi));
    return static_cast<int>(v);
  }

  bool flag(const char* key, bool fallback) const {
    auto it = doc_.find(key);
    if (it == doc_.end() || it->is_null()) return fallback;
    if (!it->is_boolean())
      fail(std::string("\"") + key + "\" is not true or false: " + it->dump());
    return it->get<bool>();
  }

  bool has(const char* key) const {
    auto it = doc_.find(key);
    return it != doc_.end() && !it->is_null();
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("model " + name_ + ": " + what);
  }

 private:
  const json& doc_;
  const std::string& name_;
};

constexpr long long kMaxDim = 1 << 20;
constexpr long long kMaxLayers = 4096;

// Some multimodal and newer configs nest the language model's fields.
const json& languageModel(const json& doc) {
  auto it = doc.find("text_config");
  return it != doc.end() && it->is_object() ? *it : doc;
}

}  // namespace

ModelShape parseModelConfig(const std::string& jsonText,
                            const std::string& name) {
  json doc;
  try {
    doc = json::parse(jsonText);
  } catch (const json::exception& e) {
    throw std::runtime_error("model " + name + ": not JSON: " + e.what());
  }
  if (!doc.is_object())
    throw std::runtime_error("model " + name + ": not a JSON object");
  const json& lm = languageModel(doc);
  Fields f(lm, name);
  ModelShape m;
  m.name = name;
  m.layers = f.count("num_hidden_layers", 1, kMaxLayers);
  m.hidden = f.count("hidden_size", 1, kMaxDim);
  m.heads = f.count("num_attention_heads", 1, kMaxDim);
  m.kvHeads = f.count("num_key_value_heads", 1, m.heads, m.heads);
  if (m.heads % m.kvHeads != 0)
    f.fail("\"num_attention_heads\" (" + std::to_string(m.heads) +
           ") is not a multiple of \"num_key_value_heads\" (" +
           std::to_string(m.kvHeads) + ")");
  m.headDim = f.count("head_dim", 1, kMaxDim,
                      m.hidden % m.heads == 0 ? m.hidden / m.heads : -1);
  m.intermediate = f.count("intermediate_size", 1, kMaxDim);
  m.vocab = f.count("vocab_size", 1, 1 << 24);
  m.tiedEmbeddings = f.flag("tie_word_embeddings", false);
  // Mixtral: num_local_experts; Qwen-MoE: num_experts; DeepSeek:
  // n_routed_experts.
  for (const char* key :
       {"num_local_experts", "num_experts", "n_routed_experts"})
    if (f.has(key)) m.experts = f.count(key, 0, 1 << 16);
  if (m.moe()) {
    m.expertsPerToken = f.count("num_experts_per_tok", 1, m.experts);
    m.expertIntermediate =
        f.count("moe_intermediate_size", 1, kMaxDim, m.intermediate);
    const int sharedCount = f.count("n_shared_experts", 0, 1 << 10, 0);
    m.sharedIntermediate =
        f.has("shared_expert_intermediate_size")
            ? f.count("shared_expert_intermediate_size", 0, kMaxDim)
            : sharedCount * m.expertIntermediate;
    m.denseLayers = f.count("first_k_dense_replace", 0, m.layers, 0);
  }
  if (f.has("kv_lora_rank")) {
    m.kvLoraRank = f.count("kv_lora_rank", 1, kMaxDim);
    m.qLoraRank = f.count("q_lora_rank", 0, kMaxDim, 0);
    m.ropeDim = f.count("qk_rope_head_dim", 0, kMaxDim);
    m.nopeDim = f.count("qk_nope_head_dim", 0, kMaxDim);
    m.valueDim = f.count("v_head_dim", 1, kMaxDim);
  }
  return m;
}

std::vector<std::string> modelPresetNames() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.emplace_back(p.name);
  return names;
}

ModelShape loadModel(const std::string& pathOrPreset) {
  for (const Preset& p : kPresets)
    if (pathOrPreset == p.name) return parseModelConfig(p.config, p.name);
  std::ifstream file(pathOrPreset);
  if (!file) {
    std::string names;
    for (const std::string& n : modelPresetNames())
      names += (names.empty() ? "" : ", ") + n;
    throw std::runtime_error("--model " + pathOrPreset +
                             ": no such file, and not a preset (" + names +
                             ")");
  }
  std::stringstream text;
  text << file.rdbuf();
  return parseModelConfig(text.str(), pathOrPreset);
}

ParameterCounts countParameters(const ModelShape& m) {
  ParameterCounts c;
  const double h = m.hidden;
  if (m.latentAttention()) {
    const double qk = m.nopeDim + m.ropeDim;
    const double q = m.qLoraRank > 0
                         ? h * m.qLoraRank + double(m.qLoraRank) * m.heads * qk
                         : h * m.heads * qk;
    const double kv = h * (m.kvLoraRank + m.ropeDim) +
                      double(m.kvLoraRank) * m.heads * (m.nopeDim + m.valueDim);
    c.attentionPerLayer = q + kv + double(m.heads) * m.valueDim * h;
  } else {
    c.attentionPerLayer =
        2 * h * m.heads * m.headDim + 2 * h * m.kvHeads * m.headDim;
  }
  c.denseMlpPerLayer = 3 * h * m.intermediate;
  if (m.moe()) {
    c.expertPerLayer = 3 * h * m.expertIntermediate;
    c.sharedPerLayer = 3 * h * m.sharedIntermediate + h * m.experts;
  }
  c.embedding = double(m.vocab) * h;
  const int dense = m.moe() ? m.denseLayers : m.layers;
  c.total = m.layers * c.attentionPerLayer + dense * c.denseMlpPerLayer +
            m.moeLayers() * (m.experts * c.expertPerLayer + c.sharedPerLayer) +
            c.embedding * (m.tiedEmbeddings ? 1 : 2);
  return c;
}

std::vector<MatrixUse> decodeMatrices(const ModelShape& m, int tp) {
  std::vector<MatrixUse> uses;
  auto add = [&](double rows, double columns, double count) {
    if (columns >= 1 && count > 0)
      uses.push_back({static_cast<size_t>(columns), rows * columns * count});
  };
  const double h = m.hidden;
  const double heads = double(m.heads) / tp;
  const int moeLayers = m.moeLayers();
  const int denseLayers = m.layers - moeLayers;
  if (m.latentAttention()) {
    const double qk = m.nopeDim + m.ropeDim;
    if (m.qLoraRank > 0) {
      add(h, m.qLoraRank, m.layers);
      add(m.qLoraRank, heads * qk, m.layers);
    } else {
      add(h, heads * qk, m.layers);
    }
    add(h, m.kvLoraRank + m.ropeDim, m.layers);
    add(m.kvLoraRank, heads * (m.nopeDim + m.valueDim), m.layers);
    add(heads * m.valueDim, h, m.layers);
  } else {
    const double kv = std::max(1, m.kvHeads / tp);
    add(h, heads * m.headDim, m.layers);     // q
    add(h, kv * m.headDim, 2.0 * m.layers);  // k, v
    add(heads * m.headDim, h, m.layers);     // o
  }
  add(h, double(m.intermediate) / tp, 2.0 * denseLayers);  // gate, up
  add(double(m.intermediate) / tp, h, denseLayers);        // down
  if (m.moe()) {
    const double chosen = double(m.expertsPerToken) * moeLayers;
    add(h, double(m.expertIntermediate) / tp, 2 * chosen);
    add(double(m.expertIntermediate) / tp, h, chosen);
    add(h, double(m.sharedIntermediate) / tp, 2.0 * moeLayers);
    add(double(m.sharedIntermediate) / tp, h, moeLayers);
    add(h, m.experts, moeLayers);  // the router
  }
  add(h, double(m.vocab) / tp, 1);  // the head
  return uses;
}

double attentionPerRank(const ModelShape& m, int tp) {
  const double h = m.hidden;
  if (m.latentAttention()) {
    const double down = h * (m.kvLoraRank + m.ropeDim);
    return (countParameters(m).attentionPerLayer - down) / tp + down;
  }
  const double kvHeld = m.kvHeads >= tp ? m.kvHeads / tp : 1;
  return 2 * h * m.heads * m.headDim / tp + 2 * h * kvHeld * m.headDim;
}

double sharedPerRank(const ModelShape& m, int tp) {
  if (!m.moe()) return 0;
  const double h = m.hidden;
  return 3 * h * m.sharedIntermediate / tp + h * m.experts;
}

double kvElementsPerTokenLayer(const ModelShape& m, int kvHeadsHeld) {
  if (m.latentAttention()) return m.kvLoraRank + m.ropeDim;
  return 2.0 * kvHeadsHeld * m.headDim;
}

double expertsTouched(const ModelShape& m, int batch) {
  if (!m.moe()) return 0;
  const double missEach = 1.0 - double(m.expertsPerToken) / m.experts;
  return m.experts * (1.0 - std::pow(missEach, batch));
}

}  // namespace mcl::perf::plan
