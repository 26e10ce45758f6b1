#include "pp/pp_command.h"

#include <mcl/mcl.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
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

// A token's trip through the stages: rank 0 sends the activations to rank
// 1, each stage passes them on, and the last stage sends the token ids
// back to rank 0, which is then ready for the next token.
class PpRun : public TokenWorkload {
 public:
  PpRun(const DecodeModel& model, int batch, mclDataType_t type, mclComm_t comm,
        int rank, int nranks)
      : type_(type),
        count_(size_t(model.hidden) * size_t(batch)),
        hidden_(size_t(model.hidden)),
        comm_(comm),
        rank_(rank),
        nranks_(nranks),
        activations_(activationBytes(model, batch, type)),
        ids_(size_t(batch)) {}

  // One token with known activations and ids, checked where they arrive:
  // the count of wrong elements over the ranks.
  int64_t check(int pass) override {
    const auto seed = static_cast<uint64_t>(pass);
    const Pattern p = makePattern(type_, mclSum, false, 1, seed);
    if (rank_ == 0) fillInput(activations_.data(), type_, p, 0, 0, count_);
    if (rank_ == nranks_ - 1)
      for (size_t i = 0; i < ids_.size(); ++i)
        ids_[i] = int32_t(seed * 1000 + i);
    trip();
    int64_t wrong = 0;
    if (rank_ != 0)
      wrong += countWrong(
          activations_.data(), typeSize(type_), count_,
          [&](size_t i) { return valueBits(type_, inputValue(p, 0, i)); });
    if (rank_ == 0)
      for (size_t i = 0; i < ids_.size(); ++i)
        wrong += ids_[i] != int32_t(seed * 1000 + i);
    return sumOverRanks(wrong, comm_, rank_);
  }

  // A prompt's trip, step after step: each step's activations (step x
  // hidden elements) from stage to stage, then the first token's id back.
  double prefill(int tokens) override {
    const size_t chunk = size_t(std::min(tokens, kPrefillChunkTokens)) *
                         hidden_ * typeSize(type_);
    if (prefill_.size() < chunk) prefill_.assign(chunk, 0);
    checkMcl(rank_, "mclBarrier", mclBarrier(comm_, nullptr), comm_);
    const auto start = std::chrono::steady_clock::now();
    const int last = nranks_ - 1;
    for (int done = 0; done < tokens; done += kPrefillChunkTokens) {
      const size_t count =
          size_t(std::min(kPrefillChunkTokens, tokens - done)) * hidden_;
      if (rank_ > 0) recv(prefill_.data(), count, type_, rank_ - 1);
      if (rank_ < last) send(prefill_.data(), count, type_, rank_ + 1);
    }
    if (rank_ == last) send(ids_.data(), 1, mclInt32, 0);
    if (rank_ == 0) recv(ids_.data(), 1, mclInt32, last);
    const std::chrono::duration<double, std::micro> elapsed =
        std::chrono::steady_clock::now() - start;
    return elapsed.count();
  }

  int prefillCalls(int steps) const override {
    return steps * (nranks_ - 1) + 1;
  }

  // One token, timed (microseconds): on rank 0 the whole trip.
  double token() override {
    checkMcl(rank_, "mclBarrier", mclBarrier(comm_, nullptr), comm_);
    const auto start = std::chrono::steady_clock::now();
    trip();
    const std::chrono::duration<double, std::micro> elapsed =
        std::chrono::steady_clock::now() - start;
    return elapsed.count();
  }

 private:
  void trip() {
    const int last = nranks_ - 1;
    if (rank_ > 0) recv(activations_.data(), count_, type_, rank_ - 1);
    if (rank_ < last) send(activations_.data(), count_, type_, rank_ + 1);
    if (rank_ == last) send(ids_.data(), ids_.size(), mclInt32, 0);
    if (rank_ == 0) recv(ids_.data(), ids_.size(), mclInt32, last);
  }

  void send(void* buf, size_t count, mclDataType_t type, int peer) {
    checkMcl(rank_, "mclSend", mclSend(buf, count, type, peer, comm_, nullptr),
             comm_);
  }

  void recv(void* buf, size_t count, mclDataType_t type, int peer) {
    checkMcl(rank_, "mclRecv", mclRecv(buf, count, type, peer, comm_, nullptr),
             comm_);
  }

  const mclDataType_t type_;
  const size_t count_;
  const size_t hidden_;
  const mclComm_t comm_;
  const int rank_;
  const int nranks_;
  std::vector<char> activations_;
  std::vector<int32_t> ids_;
  std::vector<char> prefill_;  // one prefill step's activations
};

}  // namespace

int runPpRank(const Options& options, const RankSetup& given) {
  RankSetup setup = given;
  const std::string startTime = timeNow();
  mclComm_t comm = joinCommunicator(options, &setup);
  const int rank = setup.rank;
  const int nranks = setup.nranks;
  if (nranks < 2) {  // a launcher's job of one rank (-np is checked before)
    if (rank == 0)
      std::fprintf(stderr,
                   "mcl-perf: pp passes tokens between stages: run at least "
                   "2 ranks\n");
    checkMcl(rank, "mclCommDestroy", mclCommDestroy(comm), nullptr);
    return kExitUsage;
  }
  TokenBenchmark benchmark;
  benchmark.table.operation = "pp";
  benchmark.table.callName = "hop";
  benchmark.table.title =
      "pipeline-parallel decoding, one stage per rank: each token's "
      "activations (batch x hidden) go from stage to stage, then the last "
      "stage sends the token ids (batch int32) back to the first; calls = "
      "hops";
  benchmark.make = [&](const DecodeModel& model, int batch) {
    return std::make_unique<PpRun>(model, batch, options.decode.type, comm,
                                   rank, nranks);
  };
  // nranks - 1 hops of activations, one of token ids.
  benchmark.callsPerToken = [nranks](const DecodeModel&) { return nranks; };
  benchmark.checkPasses = options.check;
  const int code =
      runTokenBenchmark(options, std::move(benchmark), comm, rank, startTime);
  checkMcl(rank, "mclCommDestroy", mclCommDestroy(comm), nullptr);
  return code;
}

}  // namespace mcl::perf
