#include "qualify/qualify_command.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "common/agreement.h"
#include "common/join.h"
#include "common/link_losses.h"
#include "common/link_probe.h"
#include "common/mcl_error.h"
#include "common/progress.h"
#include "common/rdma_frames.h"
#include "common/run_metadata.h"
#include "common/tcp_resends.h"
#include "qualify/mac_speed.h"
#include "qualify/qualify_report.h"

namespace mcl::perf {

namespace {

constexpr int kRoundTrips = 200;
constexpr size_t kProbeBytes = 8;
constexpr size_t kStreamMessageBytes = size_t{4} << 20;
constexpr double kStreamSeconds = 0.1;
constexpr int kStreamsPerDirection = 2;
// A cable that passes nothing should be called DEAD in seconds, not after
// the job's timeout.
constexpr int kCableTimeoutSeconds = 10;
constexpr int kDefaultJobTimeoutSeconds = 300;  // MCL_TIMEOUT's default

// A cable's test must give up well before the job's own communicator does:
// the other ranks wait on it meanwhile, and would time out first.
int cableTimeoutSeconds(const Options& o) {
  int job = o.timeoutSeconds;
  if (job <= 0) {
    const char* env = std::getenv("MCL_TIMEOUT");
    job = env != nullptr && std::atoi(env) > 0 ? std::atoi(env)
                                               : kDefaultJobTimeoutSeconds;
  }
  return std::max(1, std::min(kCableTimeoutSeconds, job / 4));
}

// name=value in this process while it lives (each rank is a process of
// its own), then back to what it was; no value: left alone.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value)
      : name_(name) {
    if (!value) return;
    const char* before = std::getenv(name);
    if (before != nullptr) before_ = before;
    setenv(name, value->c_str(), 1);
    set_ = true;
  }
  ~ScopedEnv() {
    if (!set_) return;
    if (before_)
      setenv(name_, before_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> before_;
  bool set_ = false;
};

std::string lastErrorOf(const char* call, mclResult_t result) {
  const std::string last = mclGetLastError(nullptr);
  return std::string(call) + ": " +
         (last.empty() ? mclGetErrorString(result) : last);
}

// The cable alone: a two-rank communicator of its ends that may use only
// its interfaces (TCP) or devices (RDMA).
mclComm_t openCable(const Options& o, const QualifyPlan& plan,
                    const CableUnderTest& c, mclComm_t job, int rank,
                    std::string* failure) {
  const bool inPair = rank == c.a.rank || rank == c.b.rank;
  std::optional<std::string> only;
  if (inPair) {
    const std::string& end = rank == c.a.rank ? c.a.end : c.b.end;
    only = plan.transport == "tcp" ? "=" + end : end;
  }
  ScopedEnv env(
      plan.transport == "tcp" ? "MCL_SOCKET_IFNAME" : "MCL_RDMA_DEVICES", only);
  mclConfig_t config = configFor(o);
  config.commName = "mcl-perf qualify";
  config.transport = plan.transport.c_str();
  config.timeoutSeconds = cableTimeoutSeconds(o);
  // End a is rank 0 of the cable's communicator, whatever the job ranks.
  mclComm_t cable = nullptr;
  const mclResult_t r = mclCommSplit(job, inPair ? 0 : MCL_SPLIT_NOCOLOR,
                                     rank == c.a.rank ? 0 : 1, &cable, &config);
  if (r != mclSuccess) {
    *failure = lastErrorOf("building the cable's communicator", r);
    return nullptr;
  }
  return cable;
}

// Round trips, then streams each way, taking turns; rank a of the cable
// is rank 0 of its communicator (split by job rank). Each direction keeps
// the better of its streams: a busy machine slows one stream now and then,
// a slow cable slows every one.
std::string probeCable(mclComm_t cable, bool isA, std::vector<char>& buffer,
                       CableMeasurement* m) {
  const int me = isA ? 0 : 1;
  ProbeResult p = roundTrips(cable, 1 - me, isA, kProbeBytes, kRoundTrips,
                             kRoundTrips / 10, buffer.data(), &m->roundTripUs);
  for (int i = 0; i < kStreamsPerDirection && p.ok(); ++i) {
    double aToB = 0, bToA = 0;
    p = streamBandwidth(cable, me, 0, 1, kStreamMessageBytes, kStreamSeconds,
                        buffer.data(), &aToB);
    if (p.ok())
      p = streamBandwidth(cable, me, 1, 0, kStreamMessageBytes, kStreamSeconds,
                          buffer.data(), &bToA);
    m->gbpsAtoB = std::max(m->gbpsAtoB, aToB);
    m->gbpsBtoA = std::max(m->gbpsBtoA, bToA);
  }
  return p.ok() ? "" : p.error;
}

CableMeasurement measureCable(const Options& o, const QualifyPlan& plan,
                              const CableUnderTest& c, mclComm_t job, int rank,
                              int nranks, std::vector<char>& buffer) {
  CableMeasurement m;
  if (!c.deadAtDetection.empty()) {  // every rank has the same plan
    m.dead = true;
    m.deadReason = c.deadAtDetection;
    return m;
  }
  std::string failure;
  mclComm_t cable = openCable(o, plan, c, job, rank, &failure);
  m.deadReason = firstFailure(job, rank, nranks, failure);
  if (m.deadReason.empty() && cable != nullptr)
    failure = probeCable(cable, rank == c.a.rank, buffer, &m);
  if (m.deadReason.empty())
    m.deadReason = firstFailure(job, rank, nranks, failure);
  m.dead = !m.deadReason.empty();
  RdmaFrames frames;
  TcpResends resends;
  LinkLosses losses;
  if (!m.dead && cable != nullptr) {
    frames = rdmaFramesOf({cable}, rank);
    resends = tcpResendsOf({cable}, rank);
    losses = linkLossesOf({cable}, rank);
  }
  if (cable != nullptr) {
    if (m.dead)
      mclCommAbort(cable);  // its peer may be gone: do not wait on it
    else
      checkMcl(rank, "mclCommDestroy", mclCommDestroy(cable), nullptr);
  }
  // Each end knows what it timed: a the round trip and a -> b, b the
  // other way; the sum over the job gives everyone all of it.
  double figures[10] = {0,
                        0,
                        0,
                        0,
                        0,
                        double(frames.received),
                        double(frames.lost),
                        double(resends.sent),
                        double(resends.resent),
                        double(losses.lost)};
  if (rank == c.a.rank && !m.dead) {
    figures[0] = m.roundTripUs.min;
    figures[1] = m.roundTripUs.median;
    figures[2] = m.roundTripUs.p99;
    figures[3] = m.gbpsAtoB;
  }
  if (rank == c.b.rank && !m.dead) figures[4] = m.gbpsBtoA;
  checkMcl(rank, "mclAllReduce",
           mclAllReduce(figures, figures, 10, mclFloat64, mclSum, job, nullptr),
           job);
  m.roundTripUs.min = figures[0];
  m.roundTripUs.median = figures[1];
  m.roundTripUs.p99 = figures[2];
  m.gbpsAtoB = figures[3];
  m.gbpsBtoA = figures[4];
  m.framesReceived = figures[5];
  m.framesLost = figures[6];
  m.bytesSent = figures[7];
  m.bytesResent = figures[8];
  m.linkLosses = figures[9];
  return m;
}

// One Mac at a time, so that hosts sharing a machine (namespaces, or the
// emulator) do not slow each other down.
std::vector<MacMeasurement> measureMacs(const QualifyPlan& plan, mclComm_t job,
                                        int rank) {
  std::vector<double> figures(2 * plan.macs.size(), 0.0);
  for (size_t i = 0; i < plan.macs.size(); ++i) {
    if (plan.macs[i].rank == rank) {
      const MacSpeed speed = measureMacSpeed();
      figures[2 * i] = speed.memcpyGBps;
      figures[2 * i + 1] = speed.reduceGBps;
    }
    checkMcl(rank, "mclBarrier", mclBarrier(job, nullptr), job);
  }
  checkMcl(rank, "mclAllReduce",
           mclAllReduce(figures.data(), figures.data(), figures.size(),
                        mclFloat64, mclSum, job, nullptr),
           job);
  std::vector<MacMeasurement> macs(plan.macs.size());
  for (size_t i = 0; i < macs.size(); ++i) {
    macs[i].speed.memcpyGBps = figures[2 * i];
    macs[i].speed.reduceGBps = figures[2 * i + 1];
  }
  return macs;
}

}  // namespace

bool qualifyCluster(const Options& options, mclComm_t job, int rank, int nranks,
                    bool writeJson, QualifyResults* out) {
  const std::string startTime = timeNow();
  QualifyResults results;
  std::string error;
  const nlohmann::json topology =
      nlohmann::json::parse(topologyJson(job, rank));
  const bool planned = planQualification(topology, nranks, options.transport,
                                         &results.plan, &error);
  if (!firstFailure(job, rank, nranks, planned ? "" : error).empty()) {
    if (rank == 0)
      std::fprintf(stderr, "mcl-perf: qualify: %s\n", error.c_str());
    return false;
  }
  std::vector<char> buffer(kStreamMessageBytes);
  {
    Progress progress(rank == 0, "qualify", results.plan.cables.size() + 1);
    for (const CableUnderTest& c : results.plan.cables) {
      progress.step("cable " + c.name());
      results.cables.push_back(
          measureCable(options, results.plan, c, job, rank, nranks, buffer));
    }
    progress.step("the Macs");
    results.macs = measureMacs(results.plan, job, rank);
  }
  judgeCables(results.plan, results.cables);
  judgeMacs(results.plan, results.cables, results.macs);
  if (out != nullptr) *out = results;
  if (rank == 0) {
    printQualifyReport(results, stdout);
    int version = 0;
    mclGetVersion(&version);
    if (writeJson && !options.jsonPath.empty() &&
        !writeReportFile(options.jsonPath,
                         qualifyJson(results, options, version, startTime),
                         &error)) {
      std::fprintf(stderr, "mcl-perf: cannot write the JSON report %s\n",
                   error.c_str());
      return false;
    }
  }
  return results.passed();
}

int runQualifyRank(const Options& options, const RankSetup& given) {
  // The job's own communicator stays off the cables' transport choice: a
  // dead RDMA port must fail only that cable's test.
  Options jobOptions = options;
  jobOptions.transport = "auto";
  RankSetup setup = given;
  mclComm_t job = joinCommunicator(jobOptions, &setup);
  const bool passed =
      qualifyCluster(options, job, setup.rank, setup.nranks, true);
  checkMcl(setup.rank, "mclCommDestroy", mclCommDestroy(job), nullptr);
  return passed ? kExitOk : kExitFailure;
}

}  // namespace mcl::perf
