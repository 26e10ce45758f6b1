#include "stage_links.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "bf16_matvec.h"

namespace mcl_example {

StageLinks::StageLinks(mcl::Communicator& world, mcl::Communicator& tpGroup,
                       const Layout& layout)
    : world_(world),
      tpGroup_(tpGroup),
      layout_(layout),
      worldRank_(layout.stage * layout.tp + layout.tpRank) {}

template <typename Call>
void StageLinks::timed(Call&& call) {
  const auto start = std::chrono::steady_clock::now();
  call();
  if (timing)
    secondsInMcl +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
}

void StageLinks::allReduceBf16(float* x, size_t n) {
  if (layout_.tp == 1) return;
  bf16_.resize(n);
  for (size_t i = 0; i < n; ++i) bf16_[i] = floatToBf16(x[i]);
  timed([&] { tpGroup_.allReduce(bf16_, mclSum, nullptr, mclBfloat16); });
  for (size_t i = 0; i < n; ++i) x[i] = bf16ToFloat(bf16_[i]);
}

void StageLinks::sendToNextStage(const float* x, size_t n) {
  bf16_.resize(n);
  for (size_t i = 0; i < n; ++i) bf16_[i] = floatToBf16(x[i]);
  timed([&] {
    world_.send(bf16_, worldRank_ + layout_.tp, nullptr, mclBfloat16);
  });
}

void StageLinks::receiveFromPreviousStage(float* x, size_t n) {
  bf16_.resize(n);
  timed([&] {
    world_.recv(bf16_, worldRank_ - layout_.tp, nullptr, mclBfloat16);
  });
  for (size_t i = 0; i < n; ++i) x[i] = bf16ToFloat(bf16_[i]);
}

void StageLinks::sendTokensToFirstStage(const std::vector<int32_t>& tokens) {
  timed([&] { world_.send(tokens, layout_.tpRank); });
}

void StageLinks::receiveTokensFromLastStage(std::vector<int32_t>& tokens) {
  timed([&] {
    world_.recv(tokens, (layout_.pp - 1) * layout_.tp + layout_.tpRank);
  });
}

std::vector<int32_t> StageLinks::argmax(const float* logits, size_t batch,
                                        size_t vocab, size_t firstVocab) {
  // Each rank's best (value, index in the whole vocabulary) per sequence;
  // doubles hold both exactly.
  std::vector<double> mine(2 * batch);
  for (size_t b = 0; b < batch; ++b) {
    const float* row = logits + b * vocab;
    size_t best = 0;
    for (size_t i = 1; i < vocab; ++i)
      if (row[i] > row[best]) best = i;
    mine[2 * b] = row[best];
    mine[2 * b + 1] = static_cast<double>(firstVocab + best);
  }
  std::vector<double> all = mine;
  if (layout_.tp > 1) {
    all.resize(mine.size() * static_cast<size_t>(layout_.tp));
    timed([&] { tpGroup_.allGather(mine, all); });
  }
  std::vector<int32_t> tokens(batch);
  for (size_t b = 0; b < batch; ++b) {
    double value = all[2 * b];
    double index = all[2 * b + 1];
    for (size_t r = 1; r < static_cast<size_t>(layout_.tp); ++r) {
      const double v = all[r * 2 * batch + 2 * b];
      const double i = all[r * 2 * batch + 2 * b + 1];
      if (v > value || (v == value && i < index)) {
        value = v;
        index = i;
      }
    }
    tokens[b] = static_cast<int32_t>(index);
  }
  return tokens;
}

}  // namespace mcl_example
