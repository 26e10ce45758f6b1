#include "tp/tp_command.h"

#include <mcl/mcl.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <ratio>
#include <string>
#include <utility>
#include <vector>

#include "common/data_check.h"
#include "common/decode_shape.h"
#include "common/dtype.h"
#include "common/join.h"
#include "common/mcl_error.h"
#include "common/run_metadata.h"
#include "common/token_timing.h"

namespace mcl::perf {

namespace {

// Each layer's buffer starts on its own pages, as separate tensors would.
constexpr size_t kLayerAlignment = 4096;
constexpr uint64_t kTemplateSeed = 99;

class TpRun : public TokenWorkload {
 public:
  TpRun(const Options& o, const DecodeModel& model, int batch, mclComm_t comm,
        int rank, int nranks)
      : o_(o),
        type_(o.decode.type),
        count_(size_t(model.hidden) * size_t(batch)),
        hidden_(size_t(model.hidden)),
        bytes_(activationBytes(model, batch, type_)),
        stride_((bytes_ + kLayerAlignment - 1) / kLayerAlignment *
                kLayerAlignment),
        layers_(model.layers),
        comm_(comm),
        rank_(rank),
        nranks_(nranks),
        storage_(stride_ * size_t(layers_) + kLayerAlignment),
        template_(bytes_) {
    // The activations a layer would have computed: small values whose sums
    // stay finite however often a token reduces them.
    fillInput(template_.data(), type_,
              makePattern(type_, mclSum, true, nranks_, kTemplateSeed), rank_,
              0, count_);
  }

  // Every call of one token, each on fresh input, checked.
  int64_t check(int /*pass*/) override {
    int64_t wrong = 0;
    const int perLayer = o_.decode.allreducesPerLayer;
    for (int l = 0; l < layers_; ++l)
      for (int k = 0; k < perLayer; ++k) {
        const Pattern p = makePattern(type_, mclSum, true, nranks_,
                                      uint64_t(l * perLayer + k + 1));
        fillInput(layer(l), type_, p, rank_, 0, count_);
        allReduce(l);
        wrong += countWrong(layer(l), typeSize(type_), count_, [&](size_t i) {
          return reducedBits(p, type_, mclSum, i);
        });
      }
    return sumOverRanks(wrong, comm_, rank_);
  }

  // A prompt's all-reduces, step after step: each layer's at step x hidden
  // elements (zeros: the sums stay zeros however often they run).
  double prefill(int tokens) override {
    const size_t chunk =
        size_t(std::min(tokens, kPrefillChunkTokens)) * hidden_;
    if (prefill_.size() < chunk * typeSize(type_))
      prefill_.assign(chunk * typeSize(type_), 0);
    checkMcl(rank_, "mclBarrier", mclBarrier(comm_, nullptr), comm_);
    const auto start = std::chrono::steady_clock::now();
    for (int done = 0; done < tokens; done += kPrefillChunkTokens) {
      const size_t count =
          size_t(std::min(kPrefillChunkTokens, tokens - done)) * hidden_;
      for (int call = 0; call < prefillCalls(1); ++call)
        checkMcl(rank_, "mclAllReduce",
                 mclAllReduce(prefill_.data(), prefill_.data(), count, type_,
                              mclSum, comm_, nullptr),
                 comm_);
    }
    const std::chrono::duration<double, std::micro> elapsed =
        std::chrono::steady_clock::now() - start;
    return elapsed.count();
  }

  int prefillCalls(int steps) const override {
    return steps * layers_ * o_.decode.allreducesPerLayer;
  }

  // One token, timed from its first call to its last (microseconds).
  double token() override {
    for (int l = 0; l < layers_; ++l)  // untimed: the model's compute
      std::memcpy(layer(l), template_.data(), bytes_);
    checkMcl(rank_, "mclBarrier", mclBarrier(comm_, nullptr), comm_);
    const auto start = std::chrono::steady_clock::now();
    for (int l = 0; l < layers_; ++l)
      for (int k = 0; k < o_.decode.allreducesPerLayer; ++k) allReduce(l);
    const std::chrono::duration<double, std::micro> elapsed =
        std::chrono::steady_clock::now() - start;
    return elapsed.count();
  }

 private:
  char* layer(int l) {
    char* base = storage_.data();
    base += (kLayerAlignment -
             reinterpret_cast<uintptr_t>(base) % kLayerAlignment) %
            kLayerAlignment;
    return base + stride_ * size_t(l);
  }

  void allReduce(int l) {
    checkMcl(
        rank_, "mclAllReduce",
        mclAllReduce(layer(l), layer(l), count_, type_, mclSum, comm_, nullptr),
        comm_);
  }

  const Options& o_;
  const mclDataType_t type_;
  const size_t count_;
  const size_t hidden_;
  const size_t bytes_;
  const size_t stride_;
  const int layers_;
  const mclComm_t comm_;
  const int rank_;
  const int nranks_;
  std::vector<char> storage_;
  std::vector<char> template_;
  std::vector<char> prefill_;  // one prefill step's activations
};

}  // namespace

int runTpRank(const Options& options, const RankSetup& given) {
  RankSetup setup = given;
  const std::string startTime = timeNow();
  mclComm_t comm = joinCommunicator(options, &setup);
  const int rank = setup.rank;
  const int nranks = setup.nranks;
  const DecodeShape& shape = options.decode;
  TokenBenchmark benchmark;
  benchmark.table.operation = "tp";
  benchmark.table.callName = "all-reduce";
  benchmark.table.title =
      "tensor-parallel decoding: each token runs " +
      std::to_string(shape.allreducesPerLayer) +
      " all-reduces (sum) per layer of batch x hidden elements, in place on "
      "the layer's buffer, back to back";
  benchmark.make = [&](const DecodeModel& model, int batch) {
    return std::make_unique<TpRun>(options, model, batch, comm, rank, nranks);
  };
  benchmark.callsPerToken = [&](const DecodeModel& model) {
    return model.layers * shape.allreducesPerLayer;
  };
  const int code =
      runTokenBenchmark(options, std::move(benchmark), comm, rank, startTime);
  checkMcl(rank, "mclCommDestroy", mclCommDestroy(comm), nullptr);
  return code;
}

}  // namespace mcl::perf
