// The collective matrix over shared memory: every collective x type x op x
// size (0, 1, odd, larger than a ring slot and than a whole ring) x in-place
// and out-of-place x 1..4 ranks (8 ranks on a reduced matrix), each element
// checked bit for bit against the reference; then a reduced matrix over
// TCP, threads (shared memory and TCP), every forced algorithm, and the
// emulated RDMA fabric.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "base/collective.h"
#include "build_paths.h"
#include "multiprocess.h"
#include "reference.h"

namespace mcl::test {
namespace {

bool reduces(Collective c) {
  return c == Collective::AllReduce || c == Collective::Reduce ||
         c == Collective::ReduceScatter;
}

struct Matrix {
  std::vector<mclDataType_t> types;
  std::vector<mclRedOp_t> ops;
  std::vector<size_t> counts;
};

Matrix fullMatrix() {
  Matrix m;
  for (int t = 0; t < mclNumTypes; ++t)
    m.types.push_back(static_cast<mclDataType_t>(t));
  for (int o = 0; o < mclNumOps; ++o)
    m.ops.push_back(static_cast<mclRedOp_t>(o));
  // 70001 elements: more than one 64 KiB slot for every type, and more than
  // a whole ring (8 slots) for 8-byte types, so the rings wrap.
  m.counts = {0, 1, 7, 1000, 70001};
  return m;
}

Matrix reducedMatrix() {
  Matrix m;
  m.types = {mclInt8, mclFloat32, mclBfloat16, mclFloat8e5m2, mclUint64};
  m.ops = {mclSum, mclMax, mclAvg};
  m.counts = {1, 1000, 70001};
  return m;
}

// Runs one case on this rank and checks it. Returns false on a mismatch.
class CaseRunner {
 public:
  CaseRunner(RankContext& ctx, mclComm_t comm) : ctx_(ctx), comm_(comm) {}

  void run(Collective coll, mclDataType_t type, mclRedOp_t op, size_t count,
           bool inPlace, int root) {
    type_ = type;
    op_ = op;
    es_ = typeBytes(type);
    const int n = ctx_.nranks();
    const int r = ctx_.rank();
    snprintf(label_, sizeof(label_), "%s %s %s count=%zu %s root=%d",
             namesOf(coll).title, typeLabel(type),
             reduces(coll) ? opLabel(op) : "-", count,
             inPlace ? "in-place" : "out-of-place", root);
    auto red = [&](int rank) {
      return
          [&, rank](size_t i) { return reductionInput(type, op, n, rank, i); };
    };
    auto mov = [&](int rank) {
      return [&, rank](size_t i) { return movementInput(type, rank, i); };
    };
    const auto nz = static_cast<size_t>(n);
    const auto rz = static_cast<size_t>(r);
    mclResult_t res = mclSuccess;
    switch (coll) {
      case Collective::AllReduce: {
        auto in = makeBuffer(type, count, red(r));
        Bytes out = inPlace ? in : sentinel(count);
        uint8_t* o = out.data();
        res = mclAllReduce(inPlace ? o : in.data(), o, count, type, op, comm_,
                           nullptr);
        if (!ctx_.ok(res, label_)) return;
        checkReduced(o, count, 0);
        if (!inPlace) checkUnchanged(in, count, red(r));
        break;
      }
      case Collective::Reduce: {
        auto in = makeBuffer(type, count, red(r));
        Bytes out = inPlace ? in : sentinel(count);
        res = mclReduce(inPlace ? out.data() : in.data(), out.data(), count,
                        type, op, root, comm_, nullptr);
        if (!ctx_.ok(res, label_)) return;
        if (r == root) checkReduced(out.data(), count, 0);
        break;
      }
      case Collective::ReduceScatter: {
        auto in = makeBuffer(type, count * nz, red(r));
        Bytes out = sentinel(count);
        uint8_t* o = inPlace ? in.data() + rz * count * es_ : out.data();
        res = mclReduceScatter(in.data(), o, count, type, op, comm_, nullptr);
        if (!ctx_.ok(res, label_)) return;
        checkReduced(o, count, rz * count);
        break;
      }
      case Collective::AllGather: {
        Bytes out = sentinel(count * nz);
        auto in = makeBuffer(type, count, mov(r));
        const uint8_t* s = in.data();
        if (inPlace) {
          if (count > 0)
            memcpy(out.data() + rz * count * es_, in.data(), count * es_);
          s = out.data() + rz * count * es_;
        }
        res = mclAllGather(s, out.data(), count, type, comm_, nullptr);
        if (!ctx_.ok(res, label_)) return;
        for (int src = 0; src < n; ++src)
          checkMoved(out.data() + static_cast<size_t>(src) * count * es_, count,
                     src);
        break;
      }
      case Collective::AllToAll: {
        auto in = makeBuffer(type, count * nz, mov(r));
        Bytes out = inPlace ? in : sentinel(count * nz);
        res = mclAlltoAll(inPlace ? out.data() : in.data(), out.data(), count,
                          type, comm_, nullptr);
        if (!ctx_.ok(res, label_)) return;
        for (int src = 0; src < n; ++src)
          checkMoved(out.data() + static_cast<size_t>(src) * count * es_, count,
                     src, rz * count);
        break;
      }
      case Collective::Broadcast: {
        auto in = makeBuffer(type, count, mov(root));
        Bytes out = (inPlace && r == root) ? in : sentinel(count);
        const uint8_t* s =
            (r == root) ? (inPlace ? out.data() : in.data()) : nullptr;
        res = mclBroadcast(s, out.data(), count, type, root, comm_, nullptr);
        if (!ctx_.ok(res, label_)) return;
        checkMoved(out.data(), count, root);
        break;
      }
      case Collective::SendRecv: {
        // Ring exchange plus a message to self, in one group.
        int next = (r + 1) % n;
        int prev = (r + n - 1) % n;
        auto in = makeBuffer(type, count, mov(r));
        Bytes fromPrev = sentinel(count);
        Bytes fromSelf = sentinel(count);
        ctx_.ok(mclGroupStart(), "mclGroupStart");
        ctx_.ok(mclSend(in.data(), count, type, next, comm_, nullptr), label_);
        ctx_.ok(mclRecv(fromPrev.data(), count, type, prev, comm_, nullptr),
                label_);
        ctx_.ok(mclSend(in.data(), count, type, r, comm_, nullptr), label_);
        ctx_.ok(mclRecv(fromSelf.data(), count, type, r, comm_, nullptr),
                label_);
        if (!ctx_.ok(mclGroupEnd(), label_)) return;
        checkMoved(fromPrev.data(), count, prev);
        checkMoved(fromSelf.data(), count, r);
        break;
      }
      case Collective::Barrier:  // not in the matrix
      case Collective::Send:
      case Collective::Recv:
        ctx_.fail("%s: not a case of the matrix", label_);
        break;
    }
  }

 private:
  Bytes sentinel(size_t count) { return Bytes(count * es_, 0xA5); }

  void checkReduced(const uint8_t* got, size_t count, size_t firstIndex) {
    uint8_t want[8];
    for (size_t i = 0; i < count; ++i) {
      double exact = exactReduction(type_, op_, ctx_.nranks(), firstIndex + i);
      encodeReduction(type_, op_, ctx_.nranks(), exact, want);
      if (memcmp(got + i * es_, want, es_) != 0) {
        ctx_.fail("%s: element %zu wrong (expected %g)", label_, i, exact);
        return;
      }
    }
  }

  template <class F>
  void checkUnchanged(const Bytes& in, size_t count, F value) {
    auto original = makeBuffer(type_, count, value);
    if (in != original) ctx_.fail("%s: sendbuff was modified", label_);
  }

  // got[i] must be element offset + i of rank src's input.
  void checkMoved(const uint8_t* got, size_t count, int src,
                  size_t offset = 0) {
    uint8_t want[8];
    for (size_t i = 0; i < count; ++i) {
      encode(type_, movementInput(type_, src, offset + i), want);
      if (memcmp(got + i * es_, want, es_) != 0) {
        ctx_.fail("%s: element %zu from rank %d wrong", label_, i, src);
        return;
      }
    }
  }

  RankContext& ctx_;
  mclComm_t comm_;
  mclDataType_t type_ = mclInt8;
  mclRedOp_t op_ = mclSum;
  size_t es_ = 1;
  char label_[160] = {};
};

// Runs every case of the matrix for coll (stopping at the first failure);
// returns the number of calls, and counts those in place.
uint64_t runCases(RankContext& ctx, CaseRunner& runner, Collective coll,
                  const Matrix& m, uint64_t* inPlaceCalls = nullptr) {
  std::vector<mclRedOp_t> ops =
      reduces(coll) ? m.ops : std::vector<mclRedOp_t>{mclSum};
  uint64_t calls = 0;
  int sizeIndex = 0;
  for (size_t count : m.counts) {
    int root = sizeIndex++ % ctx.nranks();
    for (mclDataType_t type : m.types)
      for (mclRedOp_t op : ops)
        for (bool inPlace : {false, true}) {
          runner.run(coll, type, op, count, inPlace, root);
          ++calls;
          if (inPlace && inPlaceCalls != nullptr) ++*inPlaceCalls;
          if (ctx.failed()) return calls;
        }
  }
  return calls;
}

void runMatrix(RankContext& ctx, Collective coll, const Matrix& m) {
  mclComm_t comm = initComm(ctx);
  if (comm == nullptr) return;
  CaseRunner runner(ctx, comm);
  runCases(ctx, runner, coll, m);
  ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
}

struct MatrixCase {
  Collective coll;
  int nranks;
};

class CollectiveMatrix : public ::testing::TestWithParam<MatrixCase> {};

TEST_P(CollectiveMatrix, MatchesReferenceExactly) {
  MatrixCase c = GetParam();
  Matrix m = c.nranks <= 4 ? fullMatrix() : reducedMatrix();
  EXPECT_TRUE(
      runRanks(c.nranks, [&](RankContext& ctx) { runMatrix(ctx, c.coll, m); }));
}

std::vector<MatrixCase> allCases() {
  std::vector<MatrixCase> cases;
  for (Collective coll :
       {Collective::AllReduce, Collective::AllGather, Collective::Broadcast,
        Collective::Reduce, Collective::ReduceScatter, Collective::AllToAll,
        Collective::SendRecv})
    for (int n : {1, 2, 3, 4, 8}) cases.push_back({coll, n});
  return cases;
}

// Ranks as threads of one process: several communicators side by side.
class CollectiveMatrixThreads : public ::testing::TestWithParam<MatrixCase> {};

TEST_P(CollectiveMatrixThreads, MatchesReferenceExactly) {
  MatrixCase c = GetParam();
  EXPECT_TRUE(runRankThreads(c.nranks, [&](RankContext& ctx) {
    runMatrix(ctx, c.coll, reducedMatrix());
  }));
}

std::vector<MatrixCase> threadCases() {
  std::vector<MatrixCase> cases;
  for (Collective coll :
       {Collective::AllReduce, Collective::AllGather, Collective::Broadcast,
        Collective::Reduce, Collective::ReduceScatter, Collective::AllToAll,
        Collective::SendRecv})
    cases.push_back({coll, 3});
  return cases;
}

// Ranks as threads over TCP (loopback): every rank's listener thread and
// both ends of every socket in one process.
class CollectiveMatrixTcpThreads : public ::testing::TestWithParam<MatrixCase> {
};

TEST_P(CollectiveMatrixTcpThreads, MatchesReferenceExactly) {
  MatrixCase c = GetParam();
  EXPECT_TRUE(runRankThreads(c.nranks, [&](RankContext& ctx) {
    mclConfig_t config = MCL_CONFIG_INITIALIZER;
    config.timeoutSeconds = 60;
    config.transport = "tcp";
    mclComm_t comm = nullptr;
    if (!ctx.ok(mclCommInitRankConfig(&comm, ctx.nranks(), ctx.id(), ctx.rank(),
                                      &config),
                "mclCommInitRankConfig"))
      return;
    CaseRunner runner(ctx, comm);
    runCases(ctx, runner, c.coll, reducedMatrix());
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  }));
}

std::string caseName(const ::testing::TestParamInfo<MatrixCase>& caseInfo) {
  return std::string(namesOf(caseInfo.param.coll).title) + "_" +
         std::to_string(caseInfo.param.nranks) + "ranks";
}

// The same matrix over TCP (loopback), every peer forced onto sockets.
class CollectiveMatrixTcp : public ::testing::TestWithParam<MatrixCase> {};

TEST_P(CollectiveMatrixTcp, MatchesReferenceExactly) {
  MatrixCase c = GetParam();
  Matrix m = c.nranks <= 2 ? fullMatrix() : reducedMatrix();
  EXPECT_TRUE(runRanks(c.nranks, [&](RankContext& ctx) {
    setenv("MCL_TRANSPORT", "tcp", 1);
    runMatrix(ctx, c.coll, m);
  }));
}

std::vector<MatrixCase> tcpCases() {
  std::vector<MatrixCase> cases;
  for (Collective coll :
       {Collective::AllReduce, Collective::AllGather, Collective::Broadcast,
        Collective::Reduce, Collective::ReduceScatter, Collective::AllToAll,
        Collective::SendRecv})
    for (int n : {2, 3}) cases.push_back({coll, n});
  return cases;
}

// The same matrix over RDMA on the emulated Thunderbolt fabric: real
// processes, one per Mac of each cabling (tests/fixtures/rdma).
struct RdmaCase {
  Collective coll;
  const char* fabric;  // file name; its rows give the number of ranks
  int nranks;
};

class CollectiveMatrixRdma : public ::testing::TestWithParam<RdmaCase> {};

TEST_P(CollectiveMatrixRdma, MatchesReferenceExactly) {
  RdmaCase c = GetParam();
  std::string fabric =
      mcl::testing::fixtureDir() + "/rdma/" + c.fabric + ".json";
  EXPECT_TRUE(runRanks(c.nranks, [&](RankContext& ctx) {
    setenv("MCL_TRANSPORT", "rdma", 1);
    setenv("MCL_RDMA_PROVIDER", "emu", 1);
    setenv("MCL_EMU_FABRIC", fabric.c_str(), 1);
    runMatrix(ctx, c.coll, reducedMatrix());
  }));
}

std::vector<RdmaCase> rdmaCases() {
  std::vector<RdmaCase> cases;
  const std::pair<const char*, int> fabrics[] = {
      {"pair", 2},  {"pair2", 2}, {"pair2_crossed", 2},
      {"ring3", 3}, {"mesh4", 4}, {"mesh4_doubled", 4}};
  for (Collective coll :
       {Collective::AllReduce, Collective::AllGather, Collective::Broadcast,
        Collective::Reduce, Collective::ReduceScatter, Collective::AllToAll,
        Collective::SendRecv})
    for (const auto& [fabric, n] : fabrics) cases.push_back({coll, fabric, n});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    RdmaEmu, CollectiveMatrixRdma, ::testing::ValuesIn(rdmaCases()),
    [](const ::testing::TestParamInfo<RdmaCase>& caseInfo) {
      return std::string(namesOf(caseInfo.param.coll).title) + "_" +
             caseInfo.param.fabric;
    });

// Every algorithm of every collective, forced through MCL_ALGO, over shared
// memory (3 and 5 ranks: a fold in halving-doubling, uneven trees) and TCP.
struct AlgoCase {
  Collective coll;
  const char* algo;
  const char* transport;
  int nranks;
};

class CollectiveMatrixAlgo : public ::testing::TestWithParam<AlgoCase> {};

TEST_P(CollectiveMatrixAlgo, MatchesReferenceExactly) {
  AlgoCase c = GetParam();
  EXPECT_TRUE(runRanks(c.nranks, [&](RankContext& ctx) {
    const std::string transport = c.transport;
    // "shmstream": shared memory, every ring piece by non-temporal stores.
    if (transport == "shmstream") setenv("MCL_SHM_RING_STORES", "stream", 1);
    setenv("MCL_TRANSPORT", transport == "tcp" ? "tcp" : "shm", 1);
    setenv("MCL_ALGO", c.algo, 1);
    runMatrix(ctx, c.coll, reducedMatrix());
  }));
}

std::vector<AlgoCase> algoCases() {
  const std::pair<Collective, const char*> algos[] = {
      {Collective::AllReduce, "allreduce:ring"},
      {Collective::AllReduce, "allreduce:tree"},
      {Collective::AllReduce, "allreduce:direct"},
      {Collective::AllReduce, "allreduce:halving_doubling"},
      {Collective::AllGather, "allgather:ring"},
      {Collective::AllGather, "allgather:direct"},
      {Collective::Broadcast, "broadcast:chain"},
      {Collective::Broadcast, "broadcast:tree"},
      {Collective::Reduce, "reduce:chain"},
      {Collective::Reduce, "reduce:tree"},
      {Collective::ReduceScatter, "reducescatter:ring"},
      {Collective::ReduceScatter, "reducescatter:direct"},
      {Collective::AllToAll, "alltoall:direct"}};
  std::vector<AlgoCase> cases;
  for (const auto& [coll, algo] : algos) {
    cases.push_back({coll, algo, "shm", 3});
    cases.push_back({coll, algo, "shm", 5});
    cases.push_back({coll, algo, "shmstream", 3});
    cases.push_back({coll, algo, "tcp", 3});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    Algorithms, CollectiveMatrixAlgo, ::testing::ValuesIn(algoCases()),
    [](const ::testing::TestParamInfo<AlgoCase>& caseInfo) {
      std::string algo = caseInfo.param.algo;
      return algo.substr(algo.find(':') + 1) + "_" +
             namesOf(caseInfo.param.coll).title + "_" +
             caseInfo.param.transport + std::to_string(caseInfo.param.nranks);
    });

// Shared-memory rings written with non-temporal stores only (what a rank
// picks when its peer's core is far): pieces of 16 KiB and more are folded
// in a scratch block, streamed into the slot, and copied out from cache.
class CollectiveMatrixStreamedRings
    : public ::testing::TestWithParam<MatrixCase> {};

TEST_P(CollectiveMatrixStreamedRings, MatchesReferenceExactly) {
  MatrixCase c = GetParam();
  // Results of 4 MiB and more also stream into the caller's buffer.
  Matrix large;
  large.types = {mclFloat32, mclBfloat16};
  large.ops = {mclSum, mclAvg};
  large.counts = {1300000};
  EXPECT_TRUE(runRanks(c.nranks, [&](RankContext& ctx) {
    setenv("MCL_TRANSPORT", "shm", 1);
    setenv("MCL_SHM_RING_STORES", "stream", 1);
    mclComm_t comm = initComm(ctx);
    if (comm == nullptr) return;
    CaseRunner runner(ctx, comm);
    runCases(ctx, runner, c.coll, reducedMatrix());
    runCases(ctx, runner, c.coll, large);
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  }));
}

INSTANTIATE_TEST_SUITE_P(Collectives, CollectiveMatrixStreamedRings,
                         ::testing::ValuesIn(tcpCases()), caseName);

// Zero-copy: the matrix on mclMemAlloc buffers with MCL_ZERO_COPY_MIN_BYTES=1,
// so every call (one element included: ranks with empty slices) runs in
// place; then with one rank on malloc'd buffers, where every call that
// needs that rank's buffers runs the usual way instead.
uint64_t zeroCopyCalls(RankContext& ctx, mclComm_t comm) {
  size_t size = 0;
  ctx.ok(mclCommGetTopology(comm, nullptr, &size), "topology size");
  std::string json(size, '\0');
  ctx.ok(mclCommGetTopology(comm, json.data(), &size), "topology");
  const std::string key = "\"zero_copy_calls\": ";
  size_t at = json.find(key);
  if (at == std::string::npos) {
    ctx.fail("no zero_copy_calls in the topology JSON");
    return 0;
  }
  return std::stoull(json.substr(at + key.size()));
}

struct ZeroCopyCase {
  Collective coll;
  int nranks;
  int plainRank;  // its buffers come from malloc; -1: none
};

// MCL_ZERO_COPY_MIN_BYTES=1 while the ranks run, set before they start:
// ranks that are threads must not change the environment others read.
class EveryCallZeroCopy {
 public:
  EveryCallZeroCopy() { setenv("MCL_ZERO_COPY_MIN_BYTES", "1", 1); }
  ~EveryCallZeroCopy() { unsetenv("MCL_ZERO_COPY_MIN_BYTES"); }
};

void runZeroCopyMatrix(RankContext& ctx, const ZeroCopyCase& c) {
  useSharedBuffers(ctx.rank() != c.plainRank);
  mclComm_t comm = initComm(ctx);
  if (comm == nullptr) return;
  CaseRunner runner(ctx, comm);
  uint64_t inPlaceCalls = 0;
  uint64_t calls =
      runCases(ctx, runner, c.coll, reducedMatrix(), &inPlaceCalls);
  // In place, a rank's all-to-all input would be overwritten while its
  // peers read it: those calls take the usual way.
  if (c.coll == Collective::AllToAll) calls -= inPlaceCalls;
  const uint64_t ranInPlace = zeroCopyCalls(ctx, comm);
  if (c.plainRank < 0 && ranInPlace != calls)
    ctx.fail("%llu calls ran in place, want %llu",
             static_cast<unsigned long long>(ranInPlace),
             static_cast<unsigned long long>(calls));
  // Broadcast needs only the root's buffer: it runs in place whenever the
  // root is not the plain rank.
  if (c.plainRank >= 0 && c.coll != Collective::Broadcast && ranInPlace != 0)
    ctx.fail("%llu calls ran in place with rank %d on malloc'd buffers",
             static_cast<unsigned long long>(ranInPlace), c.plainRank);
  ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  useSharedBuffers(false);
}

class CollectiveMatrixZeroCopy : public ::testing::TestWithParam<ZeroCopyCase> {
};

TEST_P(CollectiveMatrixZeroCopy, MatchesReferenceExactly) {
  ZeroCopyCase c = GetParam();
  EveryCallZeroCopy everyCall;
  EXPECT_TRUE(
      runRanks(c.nranks, [&](RankContext& ctx) { runZeroCopyMatrix(ctx, c); }));
}

// Ranks as threads: peers' memory is this process's own.
class CollectiveMatrixZeroCopyThreads
    : public ::testing::TestWithParam<ZeroCopyCase> {};

TEST_P(CollectiveMatrixZeroCopyThreads, MatchesReferenceExactly) {
  ZeroCopyCase c = GetParam();
  EveryCallZeroCopy everyCall;
  EXPECT_TRUE(runRankThreads(
      c.nranks, [&](RankContext& ctx) { runZeroCopyMatrix(ctx, c); }));
}

std::vector<ZeroCopyCase> zeroCopyCases() {
  std::vector<ZeroCopyCase> cases;
  for (Collective coll :
       {Collective::AllReduce, Collective::AllGather, Collective::Broadcast,
        Collective::Reduce, Collective::ReduceScatter, Collective::AllToAll}) {
    for (int n : {2, 3, 4}) cases.push_back({coll, n, -1});
    cases.push_back({coll, 3, 1});
  }
  return cases;
}

std::vector<ZeroCopyCase> zeroCopyThreadCases() {
  std::vector<ZeroCopyCase> cases;
  for (Collective coll :
       {Collective::AllReduce, Collective::AllGather, Collective::Broadcast,
        Collective::Reduce, Collective::ReduceScatter, Collective::AllToAll})
    cases.push_back({coll, 3, -1});
  return cases;
}

std::string zeroCopyName(
    const ::testing::TestParamInfo<ZeroCopyCase>& caseInfo) {
  const ZeroCopyCase& c = caseInfo.param;
  return std::string(namesOf(c.coll).title) + "_" + std::to_string(c.nranks) +
         "ranks" +
         (c.plainRank < 0 ? ""
                          : "_rank" + std::to_string(c.plainRank) + "Plain");
}

INSTANTIATE_TEST_SUITE_P(ZeroCopy, CollectiveMatrixZeroCopy,
                         ::testing::ValuesIn(zeroCopyCases()), zeroCopyName);
INSTANTIATE_TEST_SUITE_P(ZeroCopy, CollectiveMatrixZeroCopyThreads,
                         ::testing::ValuesIn(zeroCopyThreadCases()),
                         zeroCopyName);

INSTANTIATE_TEST_SUITE_P(Tcp, CollectiveMatrixTcp,
                         ::testing::ValuesIn(tcpCases()), caseName);

INSTANTIATE_TEST_SUITE_P(ShmThreads, CollectiveMatrixThreads,
                         ::testing::ValuesIn(threadCases()), caseName);

INSTANTIATE_TEST_SUITE_P(TcpThreads, CollectiveMatrixTcpThreads,
                         ::testing::ValuesIn(threadCases()), caseName);

INSTANTIATE_TEST_SUITE_P(
    Shm, CollectiveMatrix, ::testing::ValuesIn(allCases()),
    [](const ::testing::TestParamInfo<MatrixCase>& caseInfo) {
      return std::string(namesOf(caseInfo.param.coll).title) + "_" +
             std::to_string(caseInfo.param.nranks) + "ranks";
    });

}  // namespace
}  // namespace mcl::test
