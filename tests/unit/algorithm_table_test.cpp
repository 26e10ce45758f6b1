// The algorithm table and MCL_ALGO's syntax (algorithms/algorithm_table.h):
// every collective with a choice has entries, names are unique per
// collective, and the spec parser takes per-collective items, bare names
// and auto, and rejects what it does not know with a message that lists
// what is valid.
#include "algorithms/algorithm_table.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <initializer_list>
#include <set>
#include <string>
#include <utility>

#include "base/error.h"

namespace mcl {
namespace {

size_t at(Collective c) { return static_cast<size_t>(c); }

TEST(AlgorithmTable, EveryCollectiveHasAlgorithmsWithUniqueNames) {
  std::set<std::pair<Collective, std::string>> seen;
  for (const AlgorithmInfo& a : algorithmTable()) {
    EXPECT_TRUE(seen.insert({a.collective, a.name}).second) << a.name;
    EXPECT_NE(a.append, nullptr) << a.name;
    EXPECT_GT(std::string(a.description).size(), 20u) << a.name;
    EXPECT_EQ(findAlgorithm(a.collective, a.id), &a);
  }
  for (size_t c = 0; c < kTunedCollectives; ++c) {
    size_t count = 0;
    for (const AlgorithmInfo& a : algorithmTable())
      count += a.collective == Collective(c);
    EXPECT_GE(count, 1u) << collectiveName(Collective(c));
    EXPECT_GE(count, Collective(c) == Collective::AllToAll ? 1u : 2u)
        << collectiveName(Collective(c)) << " has a choice of algorithms";
  }
  EXPECT_EQ(algorithmNamesOf(Collective::AllReduce),
            "ring, tree, direct, halving_doubling");
  EXPECT_EQ(findAlgorithm(Collective::AllGather, Algorithm::Tree), nullptr);
}

TEST(AlgorithmSpec, EmptyAndAutoForceNothing) {
  ForcedAlgorithms none{};
  EXPECT_EQ(parseAlgorithmSpec(""), none);
  EXPECT_EQ(parseAlgorithmSpec("auto"), none);
  EXPECT_EQ(parseAlgorithmSpec(" ; auto ;"), none);
  EXPECT_EQ(describeForced(none), "");
}

TEST(AlgorithmSpec, PerCollectiveItems) {
  ForcedAlgorithms f = parseAlgorithmSpec("allreduce:tree;allgather:ring");
  EXPECT_EQ(f[at(Collective::AllReduce)], Algorithm::Tree);
  EXPECT_EQ(f[at(Collective::AllGather)], Algorithm::Ring);
  EXPECT_EQ(f[at(Collective::Broadcast)], Algorithm::Auto);
  EXPECT_EQ(describeForced(f), "allreduce:tree;allgather:ring");
  // Spelling of the collective, spaces, and a later item winning.
  f = parseAlgorithmSpec(" reduce_scatter : direct ; Reduce-Scatter:ring ");
  EXPECT_EQ(f[at(Collective::ReduceScatter)], Algorithm::Ring);
  f = parseAlgorithmSpec("allreduce:tree;allreduce:auto");
  EXPECT_EQ(f[at(Collective::AllReduce)], Algorithm::Auto);
}

TEST(AlgorithmSpec, BareNameAppliesToEveryCollectiveHavingIt) {
  ForcedAlgorithms f = parseAlgorithmSpec("tree");
  EXPECT_EQ(f[at(Collective::AllReduce)], Algorithm::Tree);
  EXPECT_EQ(f[at(Collective::Broadcast)], Algorithm::Tree);
  EXPECT_EQ(f[at(Collective::Reduce)], Algorithm::Tree);
  EXPECT_EQ(f[at(Collective::AllGather)], Algorithm::Auto);
  EXPECT_EQ(f[at(Collective::ReduceScatter)], Algorithm::Auto);
  f = parseAlgorithmSpec("direct;allreduce:ring");
  EXPECT_EQ(f[at(Collective::AllReduce)], Algorithm::Ring);
  EXPECT_EQ(f[at(Collective::AllGather)], Algorithm::Direct);
  EXPECT_EQ(describeForced(f),
            "allreduce:ring;allgather:direct;reducescatter:direct;"
            "alltoall:direct");
}

void expectRejected(const char* spec, std::initializer_list<const char*> says) {
  try {
    parseAlgorithmSpec(spec);
    ADD_FAILURE() << spec << " was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclInvalidArgument);
    for (const char* s : says)
      EXPECT_NE(std::string(e.what()).find(s), std::string::npos)
          << "'" << e.what() << "' lacks '" << s << "'";
  }
}

TEST(AlgorithmSpec, UnknownNamesAreErrorsListingTheValidOnes) {
  expectRejected("allgather:tree",
                 {"allgather has no algorithm \"tree\"", "ring, direct"});
  expectRejected("allreduce:rings", {"\"rings\"", "halving_doubling"});
  expectRejected("alltogether:ring",
                 {"unknown collective \"alltogether\"", "reducescatter"});
  expectRejected("fastest", {"no collective has an algorithm \"fastest\""});
  expectRejected(":ring", {"unknown collective \"\""});
}

}  // namespace
}  // namespace mcl
