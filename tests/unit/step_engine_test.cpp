// Tests for the step engine (progressStep, runLanes) and the ring and chain
// builders, run over the in-memory transport of fake_transport.h: every
// rank's lanes progress together in this one thread, through rings that can
// be made tiny, so the round sizing that keeps rings from deadlocking is
// exercised with counts far larger than a round.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "algorithms/algorithm_table.h"
#include "algorithms/collectives.h"
#include "algorithms/executor.h"
#include "algorithms/step.h"
#include "base/error.h"
#include "fake_transport.h"

namespace mcl::fake {
namespace {

constexpr size_t kGuard = 3;  // sentinel elements either side of outputs
const size_t kCounts[] = {0, 1, 2, 3, 5, 7, 13, 64, 257, 1000};

template <class T>
mclDataType_t typeOf() {
  return std::is_same_v<T, float> ? mclFloat32 : mclInt32;
}

// Exact small integers, different per rank and element.
template <class T>
T input(int rank, size_t i) {
  auto v = static_cast<int64_t>((i * 7919 + static_cast<size_t>(rank) * 104729 +
                                 static_cast<size_t>(rank) * i) %
                                2001) -
           1000;
  return static_cast<T>(v);
}
template <class T>
T sentinel() {
  return static_cast<T>(-77777);
}

template <class T>
T fold(mclRedOp_t op, int nranks, size_t i, size_t offset) {
  T acc = input<T>(0, offset + i);
  for (int r = 1; r < nranks; ++r) {
    T v = input<T>(r, offset + i);
    acc = op == mclMax ? std::max(acc, v) : static_cast<T>(acc + v);
  }
  if (op == mclAvg) acc = static_cast<T>(acc / static_cast<T>(nranks));
  return acc;
}

// Fails, once, at the first element where got differs from want(i).
template <class T, class Want>
void expectRange(const T* got, size_t count, Want want,
                 const std::string& what) {
  for (size_t i = 0; i < count; ++i) {
    T w = want(i);
    if (std::memcmp(&got[i], &w, sizeof(T)) != 0) {
      ADD_FAILURE() << what << ": element " << i << " of " << count << " is "
                    << got[i] << ", want " << w;
      return;
    }
  }
}

enum class Coll {
  AllReduce,
  AllGather,
  ReduceScatter,
  Broadcast,
  Reduce,
  AllToAll
};

struct Case {
  Coll coll;
  size_t count;
  bool inPlace;
  mclRedOp_t op;
  int root;
};

template <class T>
void runCase(Cluster& c, const Case& k) {
  const int n = c.nranks();
  const auto un = static_cast<size_t>(n);
  const size_t count = k.count;
  const bool blocks = k.coll == Coll::ReduceScatter || k.coll == Coll::AllToAll;
  const size_t inElems = blocks ? un * count : count;
  size_t outElems = count;
  if (k.coll == Coll::AllGather || k.coll == Coll::AllToAll ||
      (k.coll == Coll::ReduceScatter && k.inPlace))
    outElems = un * count;
  std::vector<std::vector<T>> in(un), out(un);
  std::vector<OpArgs> ops(un);
  for (int r = 0; r < n; ++r) {
    const auto ur = static_cast<size_t>(r);
    for (size_t i = 0; i < inElems; ++i) in[ur].push_back(input<T>(r, i));
    out[ur].assign(outElems + 2 * kGuard, sentinel<T>());
    T* o = out[ur].data() + kGuard;
    OpArgs& a = ops[ur];
    a.sendbuff = in[ur].data();
    a.recvbuff = o;
    a.count = count;
    a.type = typeOf<T>();
    a.op = k.op;
    a.root = k.root;
    const size_t at = k.coll == Coll::AllGather ? ur * count : 0;  // in place
    if (k.inPlace && (k.coll != Coll::Broadcast || r == k.root)) {
      std::copy(in[ur].begin(), in[ur].end(), o + at);
      a.sendbuff = o + at;
    }
    if (k.inPlace && k.coll == Coll::ReduceScatter) a.recvbuff = o + ur * count;
    a.kind = k.coll == Coll::AllReduce       ? Collective::AllReduce
             : k.coll == Coll::AllGather     ? Collective::AllGather
             : k.coll == Coll::ReduceScatter ? Collective::ReduceScatter
             : k.coll == Coll::Broadcast     ? Collective::Broadcast
             : k.coll == Coll::AllToAll      ? Collective::AllToAll
                                             : Collective::Reduce;
  }
  ASSERT_NO_THROW(c.run(ops));
  EXPECT_EQ(c.piecesLeft(), 0u) << "bytes left unconsumed in the rings";
  for (int r = 0; r < n; ++r) {
    const auto ur = static_cast<size_t>(r);
    const std::string who = "rank " + std::to_string(r);
    const T* o = out[ur].data() + kGuard;
    auto isSentinel = [](size_t) { return sentinel<T>(); };
    expectRange(out[ur].data(), kGuard, isSentinel, who + " guard before");
    expectRange(o + outElems, kGuard, isSentinel, who + " guard after");
    switch (k.coll) {
      case Coll::AllReduce:
        expectRange(
            o, count, [&](size_t i) { return fold<T>(k.op, n, i, 0); }, who);
        break;
      case Coll::AllGather:
        for (int q = 0; q < n; ++q)
          expectRange(
              o + static_cast<size_t>(q) * count, count,
              [&](size_t i) { return input<T>(q, i); },
              who + " block " + std::to_string(q));
        break;
      case Coll::ReduceScatter:
        expectRange(
            k.inPlace ? o + ur * count : o, count,
            [&](size_t i) { return fold<T>(k.op, n, i, ur * count); }, who);
        break;
      case Coll::Broadcast:
        expectRange(
            o, count, [&](size_t i) { return input<T>(k.root, i); }, who);
        break;
      case Coll::AllToAll:
        for (int q = 0; q < n; ++q)
          expectRange(
              o + static_cast<size_t>(q) * count, count,
              [&](size_t i) { return input<T>(q, ur * count + i); },
              who + " block from " + std::to_string(q));
        break;
      case Coll::Reduce:
        if (r == k.root) {
          expectRange(
              o, count, [&](size_t i) { return fold<T>(k.op, n, i, 0); }, who);
        } else {  // untouched: still the input in place, else the sentinel
          expectRange(
              o, count,
              [&](size_t i) {
                return k.inPlace ? input<T>(r, i) : sentinel<T>();
              },
              who + " (not root)");
        }
        break;
    }
  }
}

// ---- every collective, ranks x ring shapes ----

struct NamedShape {
  const char* name;
  FifoShape shape;
};
void PrintTo(const NamedShape& s, std::ostream* os) {
  *os << "ring " << s.name;
}
// maxStepBytes is half of each: as small as one float, and rounds whose
// blocks span several pieces, with odd slot counts.
const NamedShape kShapes[] = {
    {"2x4", {2, 4}},
    {"2x8", {2, 8}},
    {"3x8", {3, 8}},
    {"3x12", {3, 12}},
    {"5x24", {5, 24}},
    {"8x64", {8, 64}},
    {"3x12streamed", {3, 12, true}},
    {"8x64streamed", {8, 64, true}},
};

class CollectiveTest
    : public ::testing::TestWithParam<std::tuple<int, NamedShape>> {
 protected:
  int n() const { return std::get<0>(GetParam()); }
  FifoShape shape() const { return std::get<1>(GetParam()).shape; }

  // Every algorithm the table has for the collective, forced on every rank.
  void runAll(Coll coll) {
    for (const AlgorithmInfo& a : algorithmTable())
      if (a.collective == collectiveFor(coll)) {
        SCOPED_TRACE(std::string("algorithm ") + a.name);
        runAll(coll, a.id);
        if (HasFailure()) return;
      }
  }

  void runAll(Coll coll, Algorithm algorithm) {
    const bool rooted = coll == Coll::Broadcast || coll == Coll::Reduce;
    for (size_t count : kCounts) {
      for (bool inPlace : {false, true}) {
        for (int root = 0; root < (rooted ? n() : 1); ++root) {
          SCOPED_TRACE("count " + std::to_string(count) +
                       (inPlace ? " in place" : " out of place") + " root " +
                       std::to_string(root));
          // One cluster for the three runs, so each starts where the last
          // left the rings; stop at the first failure (the rings are dirty).
          Cluster c(n(), shape());
          for (int r = 0; r < n(); ++r) {
            c.context(r).forced[static_cast<size_t>(collectiveFor(coll))] =
                algorithm;
            if (cacheBytes_) c.context(r).link.cacheBytes = *cacheBytes_;
          }
          runCase<float>(c, {coll, count, inPlace, mclSum, root});
          if (HasFailure()) return;
          runCase<int32_t>(c, {coll, count, inPlace, mclMax, root});
          if (HasFailure()) return;
          if (coll != Coll::AllGather && coll != Coll::Broadcast &&
              coll != Coll::AllToAll)
            runCase<float>(c, {coll, count, inPlace, mclAvg, root});
          if (HasFailure()) return;
        }
      }
    }
  }

  // The tuner's cache size seen by the algorithms (unset: the default).
  std::optional<size_t> cacheBytes_;

  static Collective collectiveFor(Coll coll) {
    switch (coll) {
      case Coll::AllReduce:
        return Collective::AllReduce;
      case Coll::AllGather:
        return Collective::AllGather;
      case Coll::ReduceScatter:
        return Collective::ReduceScatter;
      case Coll::Broadcast:
        return Collective::Broadcast;
      case Coll::Reduce:
        return Collective::Reduce;
      case Coll::AllToAll:
        return Collective::AllToAll;
    }
    return Collective::AllReduce;
  }
};

TEST_P(CollectiveTest, AllReduce) { runAll(Coll::AllReduce); }
// Halving-doubling fuses its middle exchanges past the caches: with none,
// every count takes that path.
TEST_P(CollectiveTest, AllReduceHalvingDoublingWithFusedSeam) {
  cacheBytes_ = 0;
  runAll(Coll::AllReduce, Algorithm::HalvingDoubling);
}
TEST_P(CollectiveTest, AllGather) { runAll(Coll::AllGather); }
TEST_P(CollectiveTest, ReduceScatter) { runAll(Coll::ReduceScatter); }
TEST_P(CollectiveTest, Broadcast) { runAll(Coll::Broadcast); }
TEST_P(CollectiveTest, Reduce) { runAll(Coll::Reduce); }
TEST_P(CollectiveTest, AllToAll) { runAll(Coll::AllToAll); }

TEST_P(CollectiveTest, BarrierCompletesTwice) {
  Cluster c(n(), shape());
  std::vector<OpArgs> ops(static_cast<size_t>(n()));  // kind Barrier
  for (int round = 0; round < 2; ++round) {
    ASSERT_NO_THROW(c.run(ops));
    EXPECT_EQ(c.piecesLeft(), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    RanksAndRings, CollectiveTest,
    ::testing::Combine(::testing::Range(1, 10), ::testing::ValuesIn(kShapes)),
    [](const ::testing::TestParamInfo<std::tuple<int, NamedShape>>& param) {
      return "n" + std::to_string(std::get<0>(param.param)) + "_ring" +
             std::get<1>(param.param).name;
    });

// ---- progressStep alone ----

std::vector<std::byte> bytesOf(const std::vector<int32_t>& v) {
  std::vector<std::byte> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST(ProgressStepTest, ConsumesOnePieceAcrossTwoSteps) {
  Cluster c(2, {4, 64});
  c.fifo(1, 0).push(bytesOf({1, 2, 3, 4}));
  int32_t got[4] = {};
  Step a, b;
  a.recvFrom = b.recvFrom = &c.connection(0, 1);
  a.out = reinterpret_cast<std::byte*>(got);
  b.out = reinterpret_cast<std::byte*>(got + 2);
  a.bytes = b.bytes = 8;
  EXPECT_TRUE(progressStep(a));
  EXPECT_EQ(a.done, 8u);
  EXPECT_FALSE(progressStep(a)) << "a finished step moves nothing";
  EXPECT_TRUE(progressStep(b));
  EXPECT_EQ(b.done, 8u);
  EXPECT_EQ(got[0] + got[1] * 10 + got[2] * 100 + got[3] * 1000, 4321);
  EXPECT_EQ(c.piecesLeft(), 0u);
}

TEST(ProgressStepTest, ReduceForwardsInSmallerPiecesAndDivides) {
  // In from rank 1 in one 16-byte piece; out to rank 2 in 8-byte slots, two
  // of them: the step must stop when the ring is full and resume later.
  Cluster c(3, {2, 8});
  c.fifo(1, 0).push(bytesOf({10, 20, 30, 40, 50, 60}));
  const int32_t local[6] = {2, 4, 6, 8, 10, 12};
  int32_t out[6] = {};
  Step s;
  s.recvFrom = &c.connection(0, 1);
  s.sendTo = &c.connection(0, 2);
  s.local = reinterpret_cast<const std::byte*>(local);
  s.out = reinterpret_cast<std::byte*>(out);
  s.bytes = sizeof(out);
  s.reduce = s.divide = true;
  s.divisor = 2;
  s.type = mclInt32;
  s.op = mclSum;
  EXPECT_TRUE(progressStep(s));
  EXPECT_EQ(s.done, 16u) << "two 8-byte slots fit, then the ring is full";
  EXPECT_FALSE(progressStep(s)) << "no room: nothing moves";
  std::vector<int32_t> sent;
  auto drain = [&] {
    while (!c.connection(2, 0).peekRecv().empty()) {
      auto in = c.connection(2, 0).peekRecv();
      for (size_t i = 0; i < in.size(); i += 4) {
        int32_t v;
        std::memcpy(&v, in.data() + i, 4);
        sent.push_back(v);
      }
      c.connection(2, 0).releaseRecv(in.size());
    }
  };
  drain();
  EXPECT_TRUE(progressStep(s));
  EXPECT_EQ(s.done, s.bytes);
  drain();
  const std::vector<int32_t> want = {6, 12, 18, 24, 30, 36};
  EXPECT_EQ(sent, want);
  EXPECT_EQ(std::vector<int32_t>(out, out + 6), want);
}

// ---- failures: timeout, abort, peer gone ----

OpArgs pointToPoint(Collective kind, int peer, std::vector<int32_t>& buf) {
  OpArgs a;
  a.kind = kind;
  a.sendbuff = buf.data();
  a.recvbuff = buf.data();
  a.count = buf.size();
  a.type = mclInt32;
  a.root = peer;
  return a;
}

// Runs rank 0's op alone and returns the error it throws.
Error runAlone(Cluster& c, const OpArgs& op, double* seconds) {
  auto start = std::chrono::steady_clock::now();
  try {
    c.run({op}, {0});
  } catch (const Error& e) {
    *seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    return e;
  }
  ADD_FAILURE() << "runLanes returned although rank 1 never acts";
  return Error(mclSuccess, "");
}

TEST(RunLanesFailureTest, WaitingForDataTimesOutNamingThePeer) {
  Cluster c(3, {2, 8});
  c.context(0).timeout = std::chrono::milliseconds(200);
  std::vector<int32_t> buf(4);
  double seconds = 0;
  Error e = runAlone(c, pointToPoint(Collective::Recv, 2, buf), &seconds);
  EXPECT_EQ(e.code(), mclTimeout) << e.what();
  std::string msg = e.what();
  EXPECT_NE(msg.find("from rank 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 0"), std::string::npos) << msg;
  EXPECT_GE(seconds, 0.19);
  EXPECT_LT(seconds, 10.0);  // not a hang; milliseconds when quiet
  EXPECT_GT(c.waker().sleeps, 0) << "a long wait should sleep on the waker";
  // The message states how long it waited; 200 ms is not "0 s".
  EXPECT_EQ(msg.find("for 0 s"), std::string::npos) << msg;
}

TEST(RunLanesFailureTest, WaitingForRoomTimesOutNamingThePeer) {
  Cluster c(2, {2, 8});
  c.context(0).timeout = std::chrono::milliseconds(100);
  std::vector<int32_t> buf(64);  // 256 bytes into a 16-byte ring
  double seconds = 0;
  Error e = runAlone(c, pointToPoint(Collective::Send, 1, buf), &seconds);
  EXPECT_EQ(e.code(), mclTimeout) << e.what();
  EXPECT_NE(std::string(e.what()).find("send to rank 1"), std::string::npos)
      << e.what();
  EXPECT_LT(seconds, 10.0);  // not a hang; milliseconds when quiet
}

TEST(RunLanesFailureTest, AbortEndsTheWaitWithRemoteError) {
  Cluster c(2, {2, 8});
  c.context(0).timeout = std::chrono::seconds(30);
  std::atomic<bool> aborted{true};
  c.context(0).aborted = &aborted;
  std::vector<int32_t> buf(4);
  double seconds = 0;
  Error e = runAlone(c, pointToPoint(Collective::Recv, 1, buf), &seconds);
  EXPECT_EQ(e.code(), mclRemoteError) << e.what();
  EXPECT_NE(std::string(e.what()).find("abort"), std::string::npos) << e.what();
  EXPECT_LT(seconds, 10.0);  // not a hang; milliseconds when quiet
}

TEST(RunLanesFailureTest, PeerGoneIsRemoteErrorNamingThePeer) {
  Cluster c(2, {2, 8});
  c.context(0).timeout = std::chrono::seconds(30);
  c.connection(0, 1).alive = false;
  std::vector<int32_t> buf(4);
  double seconds = 0;
  Error e = runAlone(c, pointToPoint(Collective::Recv, 1, buf), &seconds);
  EXPECT_EQ(e.code(), mclRemoteError) << e.what();
  EXPECT_NE(std::string(e.what()).find("peer rank 1"), std::string::npos)
      << e.what();
  EXPECT_LT(seconds, 10.0);  // not a hang; milliseconds when quiet
}

TEST(RunLanesFailureTest, PeerGoneAfterSendingEverythingIsNoFailure) {
  Cluster c(2, {4, 64});
  std::vector<int32_t> sent = {1, 2, 3}, got(3);
  c.run({pointToPoint(Collective::Send, 0, sent)}, {1});
  c.connection(0, 1).alive = false;
  c.run({pointToPoint(Collective::Recv, 1, got)}, {0});
  EXPECT_EQ(got, sent);
}

// The negative control for the round sizing: rounds as large as the whole
// ring (instead of half) fill every ring at once and the ranks wait on each
// other forever, which the engine reports as a timeout.
TEST(RunLanesFailureTest, RoundsLargerThanHalfARingDeadlock) {
  Cluster c(3, {2, 8});
  std::vector<std::vector<float>> bufs(3, std::vector<float>(64, 1.0f));
  std::vector<OpArgs> ops;
  for (int r = 0; r < 3; ++r) {
    c.context(r).maxStepBytes = 16;
    c.context(r).timeout = std::chrono::milliseconds(100);
    c.context(r).forced[size_t(Collective::AllReduce)] = Algorithm::Ring;
    OpArgs a;
    a.kind = Collective::AllReduce;
    a.sendbuff = a.recvbuff = bufs[static_cast<size_t>(r)].data();
    a.count = 64;
    a.type = mclFloat32;
    ops.push_back(a);
  }
  try {
    c.run(ops);
    ADD_FAILURE() << "expected a deadlock";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclTimeout) << e.what();
  }
}

}  // namespace
}  // namespace mcl::fake
