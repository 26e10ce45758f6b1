#include "model_shape.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>

namespace mcl_example {

namespace {

using nlohmann::json;

constexpr long long kMaxDim = 1 << 20;
constexpr long long kMaxLayers = 4096;

// The fields of one config, each read with its range and default.
class Fields {
 public:
  Fields(const json& doc, const std::string& path) : doc_(doc), path_(path) {}

  bool has(const char* key) const {
    auto it = doc_.find(key);
    return it != doc_.end() && !it->is_null();
  }

  // A whole number in [lo, hi]; `fallback` when absent (-1: required).
  int count(const char* key, long long lo, long long hi,
            long long fallback = -1) const {
    if (!has(key)) {
      if (fallback >= 0) return static_cast<int>(fallback);
      fail(std::string("has no \"") + key + "\"");
    }
    const json& v = doc_.at(key);
    if (!v.is_number_integer() && !v.is_number_unsigned())
      fail(std::string("\"") + key + "\" is not a whole number: " + v.dump());
    const long long n = v.get<long long>();
    if (n < lo || n > hi)
      fail(std::string("\"") + key + "\" is " + std::to_string(n) +
           ": expected " + std::to_string(lo) + " to " + std::to_string(hi));
    return static_cast<int>(n);
  }

  bool flag(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    const json& v = doc_.at(key);
    if (!v.is_boolean())
      fail(std::string("\"") + key + "\" is not true or false: " + v.dump());
    return v.get<bool>();
  }

  float positive(const char* key, float fallback) const {
    if (!has(key)) return fallback;
    const json& v = doc_.at(key);
    if (!v.is_number() || !(v.get<double>() > 0))
      fail(std::string("\"") + key +
           "\" is not a positive number: " + v.dump());
    return v.get<float>();
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw ConfigError("--config " + path_ + ": " + what);
  }

 private:
  const json& doc_;
  const std::string& path_;
};

[[noreturn]] void notDivisible(const char* field, int value, int tp) {
  throw ConfigError(std::string("--tp ") + std::to_string(tp) +
                    " does not divide " + field + " (" + std::to_string(value) +
                    ")");
}

}  // namespace

ModelShape readModelShape(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw ConfigError("--config " + path + ": cannot be read");
  std::stringstream text;
  text << file.rdbuf();
  json doc;
  try {
    doc = json::parse(text.str());
  } catch (const json::exception& e) {
    throw ConfigError("--config " + path + ": not JSON: " + e.what());
  }
  if (!doc.is_object())
    throw ConfigError("--config " + path + ": not a JSON object");
  // Some multimodal configs nest the language model's fields.
  auto nested = doc.find("text_config");
  const json& lm = nested != doc.end() && nested->is_object() ? *nested : doc;
  Fields f(lm, path);
  for (const char* key : {"kv_lora_rank", "n_routed_experts"})
    if (f.has(key))
      f.fail(std::string("\"") + key +
             "\": DeepSeek-style latent attention and experts are not "
             "decoded by this example");

  ModelShape m;
  m.hidden = f.count("hidden_size", 1, kMaxDim);
  m.layers = f.count("num_hidden_layers", 1, kMaxLayers);
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
  m.rmsNormEps = f.positive("rms_norm_eps", 1e-5f);
  // Mixtral: num_local_experts; Qwen-MoE: num_experts.
  for (const char* key : {"num_local_experts", "num_experts"})
    if (f.has(key)) m.experts = f.count(key, 0, 1 << 16);
  if (m.moe()) {
    m.expertsPerToken = f.count("num_experts_per_tok", 1, m.experts);
    m.expertIntermediate =
        f.count("moe_intermediate_size", 1, kMaxDim, m.intermediate);
    m.sharedIntermediate =
        f.count("shared_expert_intermediate_size", 0, kMaxDim, 0);
  }
  return m;
}

void checkLayout(const ModelShape& m, int tp, int pp) {
  if (m.heads % tp != 0) notDivisible("num_attention_heads", m.heads, tp);
  if (m.kvHeads % tp != 0 && tp % m.kvHeads != 0)
    throw ConfigError("--tp " + std::to_string(tp) +
                      " neither divides num_key_value_heads (" +
                      std::to_string(m.kvHeads) + ") nor is a multiple of it");
  if (m.vocab % tp != 0) notDivisible("vocab_size", m.vocab, tp);
  if (m.moe()) {
    if (m.expertIntermediate % tp != 0)
      notDivisible("moe_intermediate_size (intermediate_size when absent)",
                   m.expertIntermediate, tp);
    if (m.sharedIntermediate % tp != 0)
      notDivisible("shared_expert_intermediate_size", m.sharedIntermediate, tp);
  } else if (m.intermediate % tp != 0) {
    notDivisible("intermediate_size", m.intermediate, tp);
  }
  if (pp > m.layers)
    throw ConfigError("--pp " + std::to_string(pp) +
                      " is more stages than num_hidden_layers (" +
                      std::to_string(m.layers) + ")");
}

LayerRange stageLayers(const ModelShape& m, int pp, int stage) {
  const int base = m.layers / pp;
  const int extra = m.layers % pp;
  LayerRange r;
  r.first = stage * base + (stage < extra ? stage : extra);
  r.count = base + (stage < extra ? 1 : 0);
  return r;
}

}  // namespace mcl_example
