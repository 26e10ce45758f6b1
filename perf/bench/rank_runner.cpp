#include "bench/rank_runner.h"

#include <unistd.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bench/cluster_verdict.h"
#include "bench/collective_bench.h"
#include "bench/collective_check.h"
#include "bench/memory_report.h"
#include "bench/report.h"
#include "bench/topology_errors.h"
#include "common/data_check.h"
#include "common/dtype.h"
#include "common/join.h"
#include "common/kill_drill.h"
#include "common/link_losses.h"
#include "common/mcl_error.h"
#include "common/progress.h"
#include "common/rdma_frames.h"
#include "common/run_metadata.h"
#include "common/tcp_resends.h"
#include "qualify/qualify_command.h"

namespace mcl::perf {

namespace {

constexpr size_t kBufferAlignment = 4096;
// Seed of the input written before timing; the checks use 1, 2, ...
constexpr uint64_t kTimingSeed = 99;

// A page-aligned, zeroed (so touched) buffer: from the heap, or (-R 1)
// from mclMemAlloc and registered with every communicator measured.
class Buffer {
 public:
  Buffer(size_t bytes, int rank, const std::vector<mclComm_t>& registerWith)
      : rank_(rank) {
    size_ = std::max<size_t>(
        kBufferAlignment,
        (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment);
    if (registerWith.empty()) {
      data_ = static_cast<char*>(std::aligned_alloc(kBufferAlignment, size_));
    } else {
      void* p = nullptr;
      if (mclMemAlloc(&p, size_) == mclSuccess) data_ = static_cast<char*>(p);
      shared_ = true;
    }
    if (!data_) {
      std::fprintf(stderr, "mcl-perf: rank %d: cannot allocate %zu bytes%s%s\n",
                   rank, size_, shared_ ? ": " : "",
                   shared_ ? mclGetLastError(nullptr) : "");
      exitNow(kExitFailure);
    }
    std::memset(data_, 0, size_);
    for (mclComm_t comm : registerWith) {
      void* handle = nullptr;
      checkMcl(rank, "mclCommRegister",
               mclCommRegister(comm, data_, size_, &handle), comm);
      registrations_.push_back({comm, handle});
    }
  }
  ~Buffer() {
    for (const auto& [comm, handle] : registrations_)
      checkMcl(rank_, "mclCommDeregister", mclCommDeregister(comm, handle),
               comm);
    if (shared_)
      checkMcl(rank_, "mclMemFree", mclMemFree(data_), nullptr);
    else
      std::free(data_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  char* data() const { return data_; }

 private:
  int rank_;
  char* data_ = nullptr;
  size_t size_ = 0;
  bool shared_ = false;
  std::vector<std::pair<mclComm_t, void*>> registrations_;
};

// Calls this rank ran in place on mclMemAlloc memory so far.
uint64_t zeroCopyCalls(mclComm_t comm, int rank) {
  const nlohmann::json topology =
      nlohmann::json::parse(topologyJson(comm, rank));
  return topology.value("memory", nlohmann::json::object())
      .value("zero_copy_calls", uint64_t{0});
}

// What every rank tells rank 0 for the "Using ranks" lines.
struct WireRankInfo {
  int32_t rank;
  int32_t pid;
  char host[256];
  char transport[192];
};

std::vector<RankInfo> gatherRankInfo(mclComm_t comm, int rank, int nranks,
                                     const std::string& transport) {
  WireRankInfo mine{};
  mine.rank = rank;
  mine.pid = static_cast<int32_t>(getpid());
  if (gethostname(mine.host, sizeof mine.host - 1) != 0)
    std::snprintf(mine.host, sizeof mine.host, "unknown");
  std::snprintf(mine.transport, sizeof mine.transport, "%s", transport.c_str());
  std::vector<WireRankInfo> all(static_cast<size_t>(nranks));
  checkMcl(
      rank, "mclAllGather",
      mclAllGather(&mine, all.data(), sizeof mine, mclUint8, comm, nullptr),
      comm);
  std::vector<RankInfo> infos;
  for (const WireRankInfo& w : all) {
    RankInfo info;
    info.rank = w.rank;
    info.pid = w.pid;
    info.host.assign(w.host, strnlen(w.host, sizeof w.host));
    info.transport.assign(w.transport,
                          strnlen(w.transport, sizeof w.transport));
    infos.push_back(std::move(info));
  }
  return infos;
}

// One size of one (type, op, root).
struct SizeCase {
  mclDataType_t type;
  mclRedOp_t op;
  int root;
  size_t elementSize;
  CollCounts counts;
  size_t totalBytes;  // the larger of the send and receive sizes
};

// A communicator to measure: the job's own, or (--algo all) one per
// algorithm, split off the job's with that algorithm forced.
struct Variant {
  bool tuned = false;  // the tuner chooses (shown as auto:NAME)
  mclComm_t comm = nullptr;
};

class Bench {
 public:
  Bench(const Options& o, int rank, int nranks, std::vector<Variant> variants,
        Report* report)
      : o_(o),
        coll_(o.collective),
        rank_(rank),
        nranks_(nranks),
        variants_(std::move(variants)),
        comm_(variants_.front().comm),
        report_(report),
        send_(o.maxBytes, rank, commsToRegister()),
        recv_(o.maxBytes, rank, commsToRegister()),
        sizes_(sizeList(o)) {}

  ~Bench() {
    for (const auto& [key, op] : preMulSumOps_)
      mclRedOpDestroy(op, key.first);  // its communicator still exists
  }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  void runAll() {
    const CollectiveInfo& info = collectiveInfo(coll_);
    std::vector<int> roots{-1};
    if (info.hasRoot) {
      roots.clear();
      for (int r = 0; r < nranks_; ++r)
        if (o_.root < 0 || o_.root == r) roots.push_back(r);
    }
    const std::vector<mclRedOp_t> ops =
        info.hasOp ? o_.ops : std::vector<mclRedOp_t>{mclSum};
    // -N: the whole sweep again, N times (0: until interrupted).
    for (int cycle = 0; o_.runCycles == 0 || cycle < o_.runCycles; ++cycle) {
      Progress progress(
          rank_ == 0, collectiveName(coll_),
          sizes_.size() * o_.types.size() * ops.size() * roots.size());
      progress_ = &progress;
      for (mclDataType_t type : o_.types)
        for (mclRedOp_t op : ops)
          for (int root : roots)
            timeTest(type, op, info.hasOp ? opName(op) : "none", root);
      progress_ = nullptr;
    }
  }

  int64_t localErrors() const { return localErrors_; }
  double averageBusBw() const { return bwCount_ ? bwSum_ / bwCount_ : 0.0; }

 private:
  std::vector<mclComm_t> commsToRegister() const {
    std::vector<mclComm_t> comms;
    if (o_.registerBuffers != 0)
      for (const Variant& v : variants_) comms.push_back(v.comm);
    return comms;
  }

  SizeCase makeCase(mclDataType_t type, mclRedOp_t op, int root,
                    size_t bytes) const {
    SizeCase c{type, op, root < 0 ? 0 : root, typeSize(type), {}, 0};
    c.counts = collCounts(coll_, bytes, c.elementSize, nranks_);
    c.totalBytes =
        std::max(c.counts.sendCount, c.counts.recvCount) * c.elementSize;
    return c;
  }

  CheckCase checkCase(const SizeCase& c, bool inPlace, uint64_t seed) const {
    return {coll_,   c.type,   c.op,    c.root, rank_,
            nranks_, c.counts, inPlace, seed};
  }

  // One call; iterations walk through the buffers (as nccl-tests does) so
  // small sizes do not always hit the same cache lines.
  void launch(const SizeCase& c, bool inPlace, int iter) {
    const size_t steps = c.totalBytes ? o_.maxBytes / c.totalBytes : 1;
    const size_t shift =
        c.totalBytes * (static_cast<size_t>(iter) % std::max<size_t>(steps, 1));
    const CallBuffers b = callBuffers(c.counts, inPlace, rank_, c.elementSize,
                                      send_.data(), recv_.data(), shift);
    const mclRedOp_t op = c.op == kPreMulSumOp ? preMulSumOp(c.type) : c.op;
    const CallResult r = runCollective(coll_, b, c.counts.paramCount, c.type,
                                       op, c.root, comm_, rank_, nranks_);
    checkMcl(rank_, r.call, r.result, comm_);
  }

  // One timed iteration: -m calls, in one group when there are several
  // (NCCL runs a group's calls together; the time shown is per call).
  void launchIteration(const SizeCase& c, bool inPlace, int iter) {
    if (o_.aggIters == 1) return launch(c, inPlace, iter);
    checkMcl(rank_, "mclGroupStart", mclGroupStart(), comm_);
    for (int k = 0; k < o_.aggIters; ++k) launch(c, inPlace, iter);
    checkMcl(rank_, "mclGroupEnd", mclGroupEnd(), comm_);
  }

  // mulsum's op on the communicator being measured, made on first use
  // with this rank's scalar in the element type.
  mclRedOp_t preMulSumOp(mclDataType_t type) {
    const auto key = std::make_pair(comm_, type);
    auto found = preMulSumOps_.find(key);
    if (found != preMulSumOps_.end()) return found->second;
    uint64_t scalar = valueBits(type, premulScalar(rank_));
    mclRedOp_t op = mclSum;
    // Host-immediate: the scalar is read here, once.
    checkMcl(rank_, "mclRedOpCreatePreMulSum",
             mclRedOpCreatePreMulSum(&op, &scalar, type, mclScalarHostImmediate,
                                     comm_),
             comm_);
    preMulSumOps_.emplace(key, op);
    return op;
  }

  void barrier() {
    checkMcl(rank_, "mclBarrier", mclBarrier(comm_, nullptr), comm_);
  }

  // The time per call shown: -a picks rank 0's, the average, the minimum
  // or the maximum over the ranks.
  double aggregateTime(double seconds) {
    double v = seconds;
    if (o_.average == 0) {
      checkMcl(rank_, "mclBroadcast",
               mclBroadcast(&v, &v, 1, mclFloat64, 0, comm_, nullptr), comm_);
      return v;
    }
    const mclRedOp_t op = o_.average == 1   ? mclSum
                          : o_.average == 2 ? mclMin
                                            : mclMax;
    checkMcl(rank_, "mclAllReduce",
             mclAllReduce(&v, &v, 1, mclFloat64, op, comm_, nullptr), comm_);
    return o_.average == 1 ? v / nranks_ : v;
  }

  int64_t sumOverRanks(int64_t value) {
    checkMcl(rank_, "mclAllReduce",
             mclAllReduce(&value, &value, 1, mclInt64, mclSum, comm_, nullptr),
             comm_);
    return value;
  }

  // What the library runs for this row (send/recv has no choice).
  std::string algorithmFor(const Variant& v, size_t count, mclDataType_t type) {
    std::optional<mclFunc_t> func = funcOf(o_.collective);
    if (!func) return "p2p";
    const char* name = "?";
    checkMcl(rank_, "mclCommGetAlgorithm",
             mclCommGetAlgorithm(v.comm, *func, count, type, &name), v.comm);
    return v.tuned && variants_.size() > 1 ? std::string("auto:") + name
                                           : std::string(name);
  }

  void timeTest(mclDataType_t type, mclRedOp_t op, const char* shownOp,
                int root) {
    for (const Variant& v : variants_) {
      comm_ = v.comm;
      barrier();
      for (size_t bytes : {o_.maxBytes, o_.minBytes}) {
        const SizeCase c = makeCase(type, op, root, bytes);
        for (int i = 0; i < o_.warmupIters; ++i) launch(c, false, i);
      }
    }
    // Several variants: each size measured with each in turn, so that they
    // see the machine in the same state, starting with a different one at
    // each size (whichever goes first meets the caches the last size left).
    // Rows are printed in the variants' order.
    const size_t n = variants_.size();
    for (size_t s = 0; s < sizes_.size(); ++s) {
      const SizeCase c = makeCase(type, op, root, sizes_[s]);
      progress_->step(std::to_string(c.totalBytes) + " B " + typeName(type) +
                      " " + shownOp);
      std::vector<std::array<ResultCell, 2>> cells(n);
      // -R 1: whether each cell's calls ran in place.
      std::vector<std::array<bool, 2>> inPlaceRuns(n, {false, false});
      for (size_t k = 0; k < n; ++k) {
        const size_t i = (s + k) % n;
        comm_ = variants_[i].comm;
        for (int cell = 0; cell < 2; ++cell) {
          const uint64_t before =
              o_.registerBuffers ? zeroCopyCalls(comm_, rank_) : 0;
          cells[i][size_t(cell)] = benchTime(c, cell == 1);
          if (o_.registerBuffers)
            inPlaceRuns[i][size_t(cell)] = zeroCopyCalls(comm_, rank_) > before;
        }
      }
      progress_->clear();
      for (size_t i = 0; i < n; ++i) {
        comm_ = variants_[i].comm;
        std::string algorithm =
            algorithmFor(variants_[i], c.counts.paramCount, type);
        // Out-of-place in place, in-place not (all-to-all), or both.
        if (inPlaceRuns[i][0])
          algorithm =
              inPlaceRuns[i][1] ? "zero_copy" : "zero_copy/" + algorithm;
        report_->beginRow(c.totalBytes, c.counts.paramCount, typeName(type),
                          shownOp, root, algorithm.c_str());
        report_->addCell(cells[i][0]);
        report_->addCell(cells[i][1]);
        report_->endRow();
      }
    }
    comm_ = variants_.front().comm;
  }

  // The seconds -n iterations take. -z 1 joins the ranks in a barrier
  // after each iteration, timed as nccl-tests does; -z 3 after each
  // iteration too, with the barriers' time left out.
  double timedLoop(const SizeCase& c, bool inPlace) {
    using Clock = std::chrono::steady_clock;
    if (o_.blocking == 3) {
      std::chrono::duration<double> total{0};
      for (int i = 0; i < o_.iters; ++i) {
        const auto start = Clock::now();
        launchIteration(c, inPlace, i);
        total += Clock::now() - start;
        barrier();
      }
      return total.count();
    }
    const auto start = Clock::now();
    for (int i = 0; i < o_.iters; ++i) {
      launchIteration(c, inPlace, i);
      if (o_.blocking == 1) barrier();
    }
    const std::chrono::duration<double> elapsed = Clock::now() - start;
    return elapsed.count();
  }

  ResultCell benchTime(const SizeCase& c, bool inPlace) {
    if (o_.check > 0)
      prepareCheck(checkCase(c, inPlace, kTimingSeed), send_.data(),
                   recv_.data());
    // A tenth of the iterations untimed first: after a pause (the report's
    // output, the previous size) the scheduler may hold the ranks on one
    // core for milliseconds, which would fall on whichever case is first.
    for (int i = 0; i < std::max(1, o_.iters / 10); ++i) launch(c, inPlace, i);
    barrier();

    const double seconds =
        aggregateTime(timedLoop(c, inPlace) / (double(o_.iters) * o_.aggIters));

    ResultCell cell;
    cell.timeUs = seconds * 1.0e6;
    bandwidth(coll_, c.counts, c.elementSize, seconds, nranks_, &cell.algBw,
              &cell.busBw);
    bwSum_ += cell.busBw;
    ++bwCount_;

    // nccl-tests does not check in-place sendrecv (send and receive share
    // one buffer): its #wrong is N/A.
    cell.checked = o_.check > 0 && !(coll_ == Collective::SendRecv && inPlace);
    for (int k = 0; cell.checked && k < o_.check; ++k) {
      const CheckCase cc = checkCase(c, inPlace, ++checkSeed_);
      prepareCheck(cc, send_.data(), recv_.data());
      launch(c, inPlace, 0);
      const int64_t wrong = countWrongElements(cc, send_.data(), recv_.data());
      if (wrong) ++localErrors_;
      cell.wrong = sumOverRanks(wrong);
      if (cell.wrong) break;
    }
    return cell;
  }

  const Options& o_;
  const Collective coll_;
  const int rank_;
  const int nranks_;
  const std::vector<Variant> variants_;
  mclComm_t comm_;  // the variant being measured
  Report* const report_;
  Progress* progress_ = nullptr;  // while runAll runs
  Buffer send_;
  Buffer recv_;
  const std::vector<size_t> sizes_;
  std::map<std::pair<mclComm_t, mclDataType_t>, mclRedOp_t> preMulSumOps_;
  uint64_t checkSeed_ = 0;
  int64_t localErrors_ = 0;
  double bwSum_ = 0;
  int64_t bwCount_ = 0;
};

// --algo all: the tuner's choice and every algorithm of the collective, each
// on a communicator of its own split off the job's. Otherwise the job's.
std::vector<Variant> makeVariants(const Options& o, int rank, mclComm_t comm) {
  std::optional<mclFunc_t> func = funcOf(o.collective);
  if (o.algo != "all" || !func) return {{true, comm}};
  std::vector<Variant> variants;
  std::vector<std::string> specs = {""};  // "" forces nothing: the tuner
  const char* name = nullptr;
  for (int i = 0; mclGetAlgorithmName(*func, i, &name) == mclSuccess && name;
       ++i)
    specs.push_back(std::string(collectiveName(o.collective)) + ":" + name);
  for (const std::string& spec : specs) {
    mclConfig_t config = configFor(o);
    config.algorithms = spec.c_str();
    Variant v;
    v.tuned = spec.empty();
    checkMcl(rank, "mclCommSplit",
             mclCommSplit(comm, 0, rank, &v.comm, &config), comm);
    variants.push_back(v);
  }
  return variants;
}

}  // namespace

int runRank(const Options& options, const RankSetup& given) {
  RankSetup setup = given;
  mclComm_t comm = joinCommunicator(options, &setup);
  armKillDrill(setup.rank);
  // Each rank's pairs by transport; "(emulated)" on every line about RDMA
  // on the emulated fabric.
  const std::string transport =
      transportsOfRank(comm, setup.rank, transportName(options));
  const int rank = setup.rank;
  // --qualify: the cables and Macs first, on the communicator measured
  // next; its transport, when it is a cable's (tcp, rdma), is theirs.
  Options cables = options;
  if (cables.transport != "tcp" && cables.transport != "rdma")
    cables.transport.clear();
  bool qualified = true;
  QualifyResults qualification;
  if (options.qualify)
    qualified =
        qualifyCluster(cables, comm, rank, setup.nranks, false, &qualification);
  RunInfo info;
  info.options = &options;
  info.nranks = setup.nranks;
  info.startTime = timeNow();
  checkMcl(rank, "mclGetVersion", mclGetVersion(&info.libraryVersion), comm);
  info.ranks = gatherRankInfo(comm, rank, setup.nranks, transport);
  if (rank == 0 && !options.jsonPath.empty())
    info.topologyJson = topologyJson(comm, rank);

  if (rank == 0)
    info.topologyErrors =
        topologyErrorLines(nlohmann::json::parse(topologyJson(comm, rank)));

  Report report(rank == 0);
  report.printHeader(info);
  int64_t errors = 0;
  double avgBusBw = 0;
  std::vector<Variant> variants = makeVariants(options, rank, comm);
  {
    Bench bench(options, rank, setup.nranks, variants, &report);
    bench.runAll();
    avgBusBw = bench.averageBusBw();
    errors = bench.localErrors();
  }
  std::vector<mclComm_t> runComms = {comm};
  for (const Variant& v : variants) runComms.push_back(v.comm);
  const RdmaFrames frames = rdmaFramesOf(runComms, rank);
  const LinkLosses losses = linkLossesOf(runComms, rank);
  const TcpResends resends = tcpResendsOf(runComms, rank);
  for (const Variant& v : variants)
    if (v.comm != comm)
      checkMcl(rank, "mclCommDestroy", mclCommDestroy(v.comm), nullptr);
  checkMcl(rank, "mclAllReduce",
           mclAllReduce(&errors, &errors, 1, mclInt64, mclSum, comm, nullptr),
           comm);
  const std::string rdma = rdmaLine(frames, comm, rank);
  const std::string links = linkLossLine(losses, comm, rank);
  const std::string tcp = tcpResendLine(resends, comm, rank);
  report.printFooter(errors, avgBusBw);
  if (rank == 0 && !rdma.empty()) std::printf("%s\n", rdma.c_str());
  if (rank == 0 && !links.empty()) std::printf("%s\n", links.c_str());
  if (rank == 0 && !tcp.empty()) std::printf("%s\n", tcp.c_str());
  const int64_t peakRss = largestPeakResidentBytes(comm, rank);
  if (rank == 0) {
    const nlohmann::json topology =
        nlohmann::json::parse(topologyJson(comm, rank));
    const nlohmann::json memory =
        topology.value("memory", nlohmann::json::object());
    std::printf("%s\n", memoryLine(memory, peakRss).c_str());
    info.memoryJson = memory.dump();
    info.peakResidentBytes = peakRss;
    if (options.collective == Collective::AllReduce) {
      const std::string verdict =
          clusterVerdict(topology, setup.nranks, report.peakBusBw(),
                         options.qualify ? &qualification : nullptr);
      if (!verdict.empty()) std::printf("%s\n", verdict.c_str());
    }
  }

  int code = errors ? kExitWrongData : qualified ? kExitOk : kExitFailure;
  std::string jsonError;
  if (rank == 0 && !options.jsonPath.empty() &&
      !report.writeJson(info, errors, avgBusBw, &jsonError)) {
    std::fprintf(stderr, "mcl-perf: rank 0: cannot write the JSON report %s\n",
                 jsonError.c_str());
    code = kExitFailure;
  }
  std::string csvError;
  if (rank == 0 && !options.csvPath.empty() &&
      !report.writeCsv(info, &csvError)) {
    std::fprintf(stderr, "mcl-perf: rank 0: cannot write the CSV report %s\n",
                 csvError.c_str());
    code = kExitFailure;
  }
  checkMcl(rank, "mclCommDestroy", mclCommDestroy(comm), nullptr);
  return code;
}

}  // namespace mcl::perf
