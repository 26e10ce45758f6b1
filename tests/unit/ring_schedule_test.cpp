// Tests for the ring and chain schedules (algorithms/schedules/ring.h),
// simulated symbolically with no transport: each rank's blocks are modelled
// as sets of the ranks whose contributions they hold, every rank "sends"
// what the schedule says at each step, and the checks are on what arrives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/ring_phases.h"
#include "algorithms/schedules/ring.h"

namespace mcl::schedules {
namespace {

constexpr int kMaxRanks = 16;

// A set of ranks (or of blocks): bit i is member i.
using RankSet = uint32_t;
using mcl::AlgoContext;
using mcl::backwardRing;
using mcl::forwardRing;
using mcl::RingView;

RankSet allOf(int nranks) { return (RankSet{1} << nranks) - 1; }

class RingScheduleTest : public ::testing::TestWithParam<int> {
 protected:
  int n() const { return GetParam(); }
};

// ---- evenBlock ----

TEST_P(RingScheduleTest, EvenBlockPartitionsEveryCount) {
  std::vector<size_t> counts;
  for (size_t c = 0; c <= 70; ++c) counts.push_back(c);
  for (size_t c : {127u, 128u, 129u, 1000u, 1001u, 4095u, 65537u})
    counts.push_back(c);
  counts.push_back(size_t{1} << 40);
  counts.push_back((size_t{1} << 40) + 13);
  for (size_t count : counts) {
    SCOPED_TRACE("count " + std::to_string(count));
    size_t expectedOffset = 0;
    size_t smallest = count;
    size_t largest = 0;
    for (int i = 0; i < n(); ++i) {
      Block b = evenBlock(count, n(), i);
      EXPECT_EQ(b.offset, expectedOffset) << "block " << i;  // no gap/overlap
      expectedOffset = b.offset + b.count;
      smallest = std::min(smallest, b.count);
      largest = std::max(largest, b.count);
      // The larger blocks come first.
      if (i > 0) {
        EXPECT_LE(b.count, evenBlock(count, n(), i - 1).count);
      }
    }
    EXPECT_EQ(expectedOffset, count);  // covers [0, count) exactly
    EXPECT_LE(largest - smallest, 1u);
    EXPECT_EQ(largest, (count + static_cast<size_t>(n()) - 1) /
                           static_cast<size_t>(n()));
  }
}

// ---- ring neighbours ----

TEST_P(RingScheduleTest, NeighboursAndWrap) {
  for (int r = 0; r < n(); ++r) {
    EXPECT_EQ(ringNext(n(), r), (r + 1) % n());
    EXPECT_EQ(ringPrev(n(), ringNext(n(), r)), r);
    EXPECT_EQ(ringNext(n(), ringPrev(n(), r)), r);
    for (int k = -3 * n(); k <= 3 * n(); ++k) {
      int w = wrap(n(), r + k);
      EXPECT_GE(w, 0);
      EXPECT_LT(w, n());
      EXPECT_EQ((w - (r + k)) % n(), 0) << "r=" << r << " k=" << k;
    }
  }
}

TEST_P(RingScheduleTest, ForwardAndBackwardRingsAreRingsOfPositions) {
  for (bool backward : {false, true}) {
    std::vector<int> rankAt(size_t(n()), -1);
    std::vector<RingView> views;
    for (int r = 0; r < n(); ++r) {
      AlgoContext ctx;
      ctx.rank = r;
      ctx.nranks = n();
      views.push_back(backward ? backwardRing(ctx) : forwardRing(ctx));
      ASSERT_GE(views.back().position, 0);
      ASSERT_LT(views.back().position, n());
      EXPECT_EQ(rankAt[size_t(views.back().position)], -1) << "position taken";
      rankAt[size_t(views.back().position)] = r;
    }
    for (int r = 0; r < n(); ++r) {
      const RingView& v = views[size_t(r)];
      // The schedule's next and previous positions are these ranks.
      EXPECT_EQ(v.next, rankAt[size_t(wrap(n(), v.position + 1))]);
      EXPECT_EQ(v.prev, rankAt[size_t(wrap(n(), v.position - 1))]);
      if (n() > 2) {
        EXPECT_EQ(v.next, backward ? ringPrev(n(), r) : ringNext(n(), r))
            << "the backward ring sends the other way";
      }
    }
  }
}

// ---- reduce-scatter ----

TEST_P(RingScheduleTest, ReduceScatterLeavesEachRankItsFullyReducedBlock) {
  const int N = n();
  // holds[r][b]: whose contributions rank r's copy of block b contains.
  std::vector<std::vector<RankSet>> holds(
      static_cast<size_t>(N), std::vector<RankSet>(static_cast<size_t>(N)));
  for (int r = 0; r < N; ++r)
    for (int b = 0; b < N; ++b)
      holds[static_cast<size_t>(r)][static_cast<size_t>(b)] = RankSet{1} << r;

  for (int s = 0; s < N - 1; ++s) {
    SCOPED_TRACE("step " + std::to_string(s));
    // Everyone sends first (from the state after step s-1), then receives.
    std::vector<RankSet> wire(static_cast<size_t>(N));  // into rank r
    std::vector<int> wireBlock(static_cast<size_t>(N));
    for (int r = 0; r < N; ++r) {
      RingStep st = ringReduceScatterStep(N, r, s);
      ASSERT_GE(st.sendBlock, 0);
      ASSERT_LT(st.sendBlock, N);
      ASSERT_GE(st.recvBlock, 0);
      ASSERT_LT(st.recvBlock, N);
      const auto to = static_cast<size_t>(ringNext(N, r));
      wire[to] =
          holds[static_cast<size_t>(r)][static_cast<size_t>(st.sendBlock)];
      wireBlock[to] = st.sendBlock;
    }
    for (int r = 0; r < N; ++r) {
      RingStep st = ringReduceScatterStep(N, r, s);
      const auto ur = static_cast<size_t>(r);
      // What r expects is what its left neighbour sent.
      EXPECT_EQ(st.recvBlock, wireBlock[ur]) << "rank " << r;
      EXPECT_EQ(st.recvBlock,
                ringReduceScatterStep(N, ringPrev(N, r), s).sendBlock);
      RankSet& mine = holds[ur][static_cast<size_t>(st.recvBlock)];
      EXPECT_EQ(mine & wire[ur], 0u)
          << "rank " << r << " would count a contribution twice";
      mine |= wire[ur];
      // Fused pipeline: the block received now is the one sent next.
      if (s + 1 < N - 1) {
        EXPECT_EQ(ringReduceScatterStep(N, r, s + 1).sendBlock, st.recvBlock)
            << "rank " << r;
      }
    }
  }
  for (int r = 0; r < N; ++r) {
    EXPECT_EQ(holds[static_cast<size_t>(r)][static_cast<size_t>(r)], allOf(N))
        << "rank " << r << " does not hold every contribution to its block";
    if (N > 1) {
      EXPECT_EQ(ringReduceScatterStep(N, r, N - 2).recvBlock, r)
          << "the last block received must be the rank's own";
    }
  }
}

// ---- all-gather ----

TEST_P(RingScheduleTest, AllGatherDeliversEveryBlockOnce) {
  const int N = n();
  std::vector<RankSet> has(static_cast<size_t>(N));
  for (int r = 0; r < N; ++r) has[static_cast<size_t>(r)] = RankSet{1} << r;
  for (int s = 0; s < N - 1; ++s) {
    SCOPED_TRACE("step " + std::to_string(s));
    std::vector<int> wireBlock(static_cast<size_t>(N), -1);
    for (int r = 0; r < N; ++r) {
      RingStep st = ringAllGatherStep(N, r, s);
      ASSERT_GE(st.sendBlock, 0);
      ASSERT_LT(st.sendBlock, N);
      EXPECT_NE(has[static_cast<size_t>(r)] & (RankSet{1} << st.sendBlock), 0u)
          << "rank " << r << " sends block " << st.sendBlock
          << " it does not have";
      wireBlock[static_cast<size_t>(ringNext(N, r))] = st.sendBlock;
    }
    for (int r = 0; r < N; ++r) {
      RingStep st = ringAllGatherStep(N, r, s);
      const auto ur = static_cast<size_t>(r);
      EXPECT_EQ(st.recvBlock, wireBlock[ur]) << "rank " << r;
      EXPECT_EQ(has[ur] & (RankSet{1} << st.recvBlock), 0u)
          << "rank " << r << " receives block " << st.recvBlock << " twice";
      has[ur] |= RankSet{1} << st.recvBlock;
      if (s + 1 < N - 1) {
        EXPECT_EQ(ringAllGatherStep(N, r, s + 1).sendBlock, st.recvBlock)
            << "rank " << r;
      }
    }
  }
  for (int r = 0; r < N; ++r)
    EXPECT_EQ(has[static_cast<size_t>(r)], allOf(N)) << "rank " << r;
}

// All-reduce fuses the phases: the block reduce-scatter completes last is the
// one all-gather sends first.
TEST_P(RingScheduleTest, ReduceScatterHandsOverToAllGather) {
  const int N = n();
  if (N < 2) GTEST_SKIP() << "no steps with one rank";
  for (int r = 0; r < N; ++r)
    EXPECT_EQ(ringAllGatherStep(N, r, 0).sendBlock,
              ringReduceScatterStep(N, r, N - 2).recvBlock)
        << "rank " << r;
}

// ---- chains ----

// Follows `next` from the one rank without a `prev`; checks the links pair up
// and the path visits every rank once. Returns the path.
std::vector<int> walkChain(int nranks, const std::vector<ChainLink>& links) {
  int start = -1;
  for (int r = 0; r < nranks; ++r) {
    const ChainLink& l = links[static_cast<size_t>(r)];
    EXPECT_TRUE(l.prev == -1 || (l.prev >= 0 && l.prev < nranks)) << r;
    EXPECT_TRUE(l.next == -1 || (l.next >= 0 && l.next < nranks)) << r;
    EXPECT_NE(l.prev, r);
    EXPECT_NE(l.next, r);
    if (l.next >= 0) {
      EXPECT_EQ(links[static_cast<size_t>(l.next)].prev, r)
          << "rank " << r << " sends to " << l.next
          << " which does not receive from it";
    }
    if (l.prev >= 0) {
      EXPECT_EQ(links[static_cast<size_t>(l.prev)].next, r)
          << "rank " << r << " receives from " << l.prev
          << " which does not send to it";
    }
    if (l.prev < 0) {
      EXPECT_EQ(start, -1) << "two chain heads: " << start << " and " << r;
      start = r;
    }
  }
  std::vector<int> path;
  std::vector<bool> seen(static_cast<size_t>(nranks), false);
  for (int r = start; r >= 0 && path.size() <= static_cast<size_t>(nranks);
       r = links[static_cast<size_t>(r)].next) {
    if (seen[static_cast<size_t>(r)]) {
      ADD_FAILURE() << "chain revisits rank " << r;
      break;
    }
    seen[static_cast<size_t>(r)] = true;
    path.push_back(r);
  }
  EXPECT_EQ(path.size(), static_cast<size_t>(nranks))
      << "the chain misses ranks";
  return path;
}

TEST_P(RingScheduleTest, BroadcastChainStartsAtRootAndCoversAll) {
  const int N = n();
  for (int root = 0; root < N; ++root) {
    SCOPED_TRACE("root " + std::to_string(root));
    std::vector<ChainLink> links;
    for (int r = 0; r < N; ++r) links.push_back(broadcastChain(N, root, r));
    std::vector<int> path = walkChain(N, links);
    ASSERT_FALSE(path.empty());
    EXPECT_EQ(path.front(), root);
    EXPECT_EQ(links[static_cast<size_t>(root)].prev, -1);
  }
}

TEST_P(RingScheduleTest, ReduceChainEndsAtRootAndCoversAll) {
  const int N = n();
  for (int root = 0; root < N; ++root) {
    SCOPED_TRACE("root " + std::to_string(root));
    std::vector<ChainLink> links;
    for (int r = 0; r < N; ++r) links.push_back(reduceChain(N, root, r));
    std::vector<int> path = walkChain(N, links);
    ASSERT_FALSE(path.empty());
    EXPECT_EQ(path.back(), root);
    EXPECT_EQ(links[static_cast<size_t>(root)].next, -1);
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks1To16, RingScheduleTest,
                         ::testing::Range(1, kMaxRanks + 1),
                         [](const ::testing::TestParamInfo<int>& param) {
                           return "n" + std::to_string(param.param);
                         });

}  // namespace
}  // namespace mcl::schedules
