// Decodes a Llama-shaped model with random bfloat16 weights, sharded over
// the ranks of an mcl job: --pp pipeline stages of --tp tensor-parallel
// ranks each, and prints the tokens per second. It does the work `mcl-perf
// plan` predicts (docs/planning.md), so the prediction can be checked
// against it (README.md beside this file).
//
//   export MCL_WORLD_SIZE=2 MCL_ROOT=127.0.0.1:29517
//   export MCL_SECRET=$(openssl rand -hex 16)
//   MCL_RANK=0 ./sharded-decode --config config.json --tp 2 --pp 1 &
//   MCL_RANK=1 ./sharded-decode --config config.json --tp 2 --pp 1; wait
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <mcl/mcl.hpp>
#include <new>
#include <string>
#include <vector>

#include "bf16_matvec.h"
#include "layer_compute.h"
#include "model_shape.h"
#include "rank_shard.h"
#include "stage_links.h"

namespace {

using namespace mcl_example;

struct Options {
  std::string config;
  int tp = 0;
  int pp = 0;
  int batch = 1;
  int context = 256;
  int tokens = 16;
  int warmup = 2;
  uint64_t seed = 1;
};

// -1 to go on, else the exit code (0 after --help, 2 on a bad flag).
int parseOptions(int argc, char** argv, Options& o) {
  const CLI::Range kPositive(1, INT_MAX);
  CLI::App app(
      "Decodes a Llama-shaped model with random bf16 weights, sharded "
      "tensor-parallel (--tp ranks per stage) and pipeline-parallel (--pp "
      "stages) over the ranks of an mcl job; prints tokens per second.",
      "sharded-decode");
  app.add_option("--config", o.config, "a Hugging Face config.json")
      ->required();
  app.add_option("--tp", o.tp, "tensor-parallel ranks per stage")
      ->required()
      ->check(kPositive);
  app.add_option("--pp", o.pp, "pipeline stages (tp x pp = the ranks)")
      ->required()
      ->check(kPositive);
  app.add_option("--batch", o.batch, "sequences decoded together")
      ->check(kPositive)
      ->capture_default_str();
  app.add_option("--context", o.context,
                 "KV cache positions every step attends over")
      ->check(kPositive)
      ->capture_default_str();
  app.add_option("--tokens", o.tokens, "timed decode steps")
      ->check(kPositive)
      ->capture_default_str();
  app.add_option("--warmup", o.warmup, "untimed steps first")
      ->check(CLI::Range(0, INT_MAX))
      ->capture_default_str();
  app.add_option("--seed", o.seed, "of the random weights and first tokens")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::printf("%s", app.help().c_str());
    return 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "sharded-decode: %s (--help lists the flags)\n",
                 e.what());
    return 2;
  }
  return -1;
}

uint64_t physicalMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0) return UINT64_MAX;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
}

// One rank's part of decoding: the token ids, the activations, the step.
class Decoder {
 public:
  Decoder(RankShard& shard, StageLinks& links, const Layout& layout,
          uint64_t seed)
      : s_(shard),
        d_(shard.dims),
        links_(links),
        pp_(layout.pp),
        ws_(d_),
        x_(d_.batch * d_.hidden),
        h_(d_.batch * d_.hidden),
        part_(d_.batch * d_.hidden),
        logits_(d_.lastStage ? d_.batch * d_.vocab : 0),
        tokens_(d_.batch) {
    for (size_t b = 0; b < d_.batch; ++b)
      tokens_[b] = firstToken(seed, b, d_.fullVocab);
  }

  // One token for every sequence; afterwards tokens() holds them on the
  // first and last stages.
  void step() {
    const size_t n = d_.batch * d_.hidden;
    if (d_.firstStage) {
      for (size_t b = 0; b < d_.batch; ++b) {
        const uint16_t* row =
            s_.embedding.data() + static_cast<size_t>(tokens_[b]) * d_.hidden;
        for (size_t i = 0; i < d_.hidden; ++i)
          x_[b * d_.hidden + i] = bf16ToFloat(row[i]);
      }
    } else {
      links_.receiveFromPreviousStage(x_.data(), n);
    }
    // The cache keeps its length: this step's keys and values overwrite
    // one slot, and every slot is attended.
    const size_t slot = steps_ % d_.context;
    for (LayerShard& layer : s_.layers) {
      rmsNorm(x_.data(), layer.attentionNorm.data(), h_.data(), d_.hidden,
              d_.batch, d_.eps);
      attentionShard(layer, d_, h_.data(), slot, part_.data(), ws_);
      addAcrossStage();
      rmsNorm(x_.data(), layer.mlpNorm.data(), h_.data(), d_.hidden, d_.batch,
              d_.eps);
      mlpShard(layer, d_, h_.data(), part_.data(), ws_);
      addAcrossStage();
    }
    if (d_.lastStage) {
      rmsNorm(x_.data(), s_.finalNorm.data(), h_.data(), d_.hidden, d_.batch,
              d_.eps);
      logitsShard(s_, h_.data(), logits_.data(), ws_);
      tokens_ =
          links_.argmax(logits_.data(), d_.batch, d_.vocab, d_.firstVocab);
      if (pp_ > 1) links_.sendTokensToFirstStage(tokens_);
    } else {
      links_.sendToNextStage(x_.data(), n);
    }
    if (d_.firstStage && pp_ > 1) links_.receiveTokensFromLastStage(tokens_);
    ++steps_;
  }

  const std::vector<int32_t>& tokens() const { return tokens_; }

 private:
  // x += the sum of every rank's part (bf16 on the wire).
  void addAcrossStage() {
    links_.allReduceBf16(part_.data(), part_.size());
    for (size_t i = 0; i < x_.size(); ++i) x_[i] += part_[i];
  }

  RankShard& s_;
  const ShardDims& d_;
  StageLinks& links_;
  int pp_;
  Workspace ws_;
  std::vector<float> x_, h_, part_, logits_;
  std::vector<int32_t> tokens_;
  uint64_t steps_ = 0;
};

// To the thousandth (JSON prints the shortest form: 81.3, not 81.30000001).
double thousandths(double v) { return std::round(v * 1000) / 1000; }

std::string gib(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB",
                static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
  return text;
}

int run(const Options& opt) {
  ModelShape model;
  try {
    model = readModelShape(opt.config);
    checkLayout(model, opt.tp, opt.pp);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "sharded-decode: %s\n", e.what());
    return 2;
  }

  mcl::Communicator world = mcl::Communicator::fromEnv();
  const int rank = world.rank();
  const int nranks = world.size();
  if (opt.tp * opt.pp != nranks) {
    if (rank == 0)
      std::fprintf(stderr,
                   "sharded-decode: --tp %d x --pp %d makes %d ranks, but "
                   "the world size is %d\n",
                   opt.tp, opt.pp, opt.tp * opt.pp, nranks);
    return 2;
  }
  Layout layout;
  layout.tp = opt.tp;
  layout.pp = opt.pp;
  layout.stage = rank / opt.tp;
  layout.tpRank = rank % opt.tp;
  layout.batch = opt.batch;
  layout.context = opt.context;
  mcl::Communicator tpGroup = world.split(layout.stage, rank);

  // The shard, if this rank can hold it; every rank learns whether all can.
  const ShardDims dims = shardDims(model, layout);
  const ShardBytes bytes = shardBytes(dims);
  const uint64_t need = bytes.weights + bytes.kvCache;
  std::string failure;
  RankShard shard;
  if (need > physicalMemory()) {
    failure = "more than this machine's " + gib(physicalMemory());
  } else {
    try {
      shard = buildShard(dims, opt.seed);
    } catch (const std::bad_alloc&) {
      failure = "allocation failed";
    }
  }
  if (!failure.empty())
    std::fprintf(stderr,
                 "sharded-decode: rank %d needs %llu bytes (%s: weights %llu, "
                 "KV cache %llu): %s\n",
                 rank, static_cast<unsigned long long>(need), gib(need).c_str(),
                 static_cast<unsigned long long>(bytes.weights),
                 static_cast<unsigned long long>(bytes.kvCache),
                 failure.c_str());
  int32_t allHold = failure.empty() ? 1 : 0;
  world.allReduce(mcl::Span<int32_t>{&allHold, 1}, mclMin);
  if (allHold == 0) {
    if (rank == 0 && failure.empty())
      std::fprintf(stderr,
                   "sharded-decode: another rank cannot hold its shard (its "
                   "message says why)\n");
    return 1;
  }

  StageLinks links(world, tpGroup, layout);
  Decoder decoder(shard, links, layout, opt.seed);
  int64_t checksum = 0;
  auto decode = [&] {
    decoder.step();
    for (int32_t t : decoder.tokens()) checksum += t;
  };
  for (int i = 0; i < opt.warmup; ++i) decode();
  world.barrier();
  links.timing = true;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < opt.tokens; ++i) decode();
  links.timing = false;
  world.barrier();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  double commSeconds = links.secondsInMcl;
  world.allReduce(mcl::Span<double>{&commSeconds, 1}, mclMax);
  const int64_t mine = static_cast<int64_t>(bytes.weights);
  std::vector<int64_t> weightBytes(static_cast<size_t>(nranks));
  world.allGather(mcl::Span<const int64_t>{&mine, 1}, weightBytes);
  if (rank != 0) return 0;

  const double stepMs = seconds * 1e3 / opt.tokens;
  const double tokensPerS = opt.batch * opt.tokens / seconds;
  const double commMs = commSeconds * 1e3 / opt.tokens;
  std::printf(
      "sharded-decode: tp %d x pp %d, batch %d, context %d: %.1f tokens/s "
      "(%.1f ms per step, %.1f ms in mcl calls), %d steps\n",
      opt.tp, opt.pp, opt.batch, opt.context, tokensPerS, stepMs, commMs,
      opt.tokens);
  nlohmann::ordered_json out;
  out["tp"] = opt.tp;
  out["pp"] = opt.pp;
  out["batch"] = opt.batch;
  out["context"] = opt.context;
  out["steps"] = opt.tokens;
  out["step_ms"] = thousandths(stepMs);
  out["tokens_per_s"] = thousandths(tokensPerS);
  out["comm_ms_per_step"] = thousandths(commMs);
  out["weights_bytes_per_rank"] = weightBytes;
  out["token_checksum"] = checksum;
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  Options opt;
  if (const int code = parseOptions(argc, argv, opt); code >= 0) return code;
  return run(opt);
} catch (const mcl::Error& e) {
  std::fprintf(stderr, "sharded-decode: mcl error %d: %s\n",
               static_cast<int>(e.code()), e.what());
  return 1;
}
