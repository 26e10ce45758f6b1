// Everything the example decoder sends, through mcl: the all-reduces of a
// stage's tensor-parallel group (bfloat16), the argmax's all-gather, and
// the pipeline's hops over the world communicator (the activations to the
// next stage's rank of the same tpRank, the token ids back to the first
// stage's). While `timing` is on, the time inside the mcl calls adds up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mcl/mcl.hpp>
#include <vector>

#include "rank_shard.h"

namespace mcl_example {

class StageLinks {
 public:
  // tpGroup: world.split(stage, rank), this rank's stage's ranks.
  StageLinks(mcl::Communicator& world, mcl::Communicator& tpGroup,
             const Layout& layout);

  // Sums x[n] over the stage's ranks, sent as bfloat16 (nothing at tp 1).
  void allReduceBf16(float* x, size_t n);
  // The activations x[n] to the next stage, as bfloat16, or from the
  // previous one.
  void sendToNextStage(const float* x, size_t n);
  void receiveFromPreviousStage(float* x, size_t n);
  // The last stage's token ids to the first stage's rank.
  void sendTokensToFirstStage(const std::vector<int32_t>& tokens);
  void receiveTokensFromLastStage(std::vector<int32_t>& tokens);
  // The token each sequence's logits pick over the stage: logits[batch]
  // [vocab] holds the vocabulary's columns from firstVocab; the highest
  // value wins, the lowest index on ties.
  std::vector<int32_t> argmax(const float* logits, size_t batch, size_t vocab,
                              size_t firstVocab);

  bool timing = false;
  double secondsInMcl = 0;

 private:
  template <typename Call>
  void timed(Call&& call);

  mcl::Communicator& world_;
  mcl::Communicator& tpGroup_;
  Layout layout_;
  int worldRank_ = 0;
  std::vector<uint16_t> bf16_;
};

}  // namespace mcl_example
