// What mcl-perf's command line asks for (common/command_line.cpp parses
// it): nccl-tests' flags with their meanings and defaults, plus mcl's own
// (-np, --transport, --algo, -J, --csv).
#pragma once

#include <mcl/mcl.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/collective_bench.h"
#include "common/decode_shape.h"
#include "plan/plan_options.h"

namespace mcl::perf {

// What mcl-perf was asked to do: benchmark a collective, show the cluster
// (`topo`), the tuner's predictions (`tune`) or the tunables (`params`),
// time round trips between every pair of ranks (`latency`), test every
// cable and Mac (`qualify`), or time a decoded token's communication
// (`tp`, tensor-parallel; `pp`, pipeline-parallel).
enum class Command {
  Benchmark,
  Topo,
  Tune,
  Params,
  Latency,
  Qualify,
  Tp,
  Pp,
  Plan
};

struct Options {
  Command command = Command::Benchmark;
  Collective collective = Collective::AllReduce;
  size_t minBytes = size_t{32} << 20;
  size_t maxBytes = size_t{32} << 20;
  size_t stepBytes = size_t{1} << 20;
  size_t stepFactor = 1;  // > 1: multiply; 1: add stepBytes
  int iters = 20;
  int warmupIters = 5;
  int check = 1;  // check passes per measurement; 0 disables the check
  // nccl-tests' -m: calls per timed iteration, issued in one
  // mclGroupStart/End (the time shown is per call).
  int aggIters = 1;
  // nccl-tests' -N: the whole sweep this many times; 0 repeats it until the
  // run is interrupted.
  int runCycles = 1;
  // nccl-tests' -z: 0 and 2 wait for each call (mcl-perf's calls are
  // synchronous), 1 also joins the ranks in a barrier after each timed
  // iteration, 3 after each size's timed loop with the barrier's time left
  // out.
  int blocking = 0;
  bool cpuTime = false;       // -C 1: the column says cputime (see report)
  bool parallelInit = false;  // -p 1: nothing to run in parallel, recorded
  std::vector<mclDataType_t> types{mclFloat32};
  std::vector<mclRedOp_t> ops{mclSum};
  std::string datatypeArg = "float";
  std::string opArg = "sum";
  int root = 0;            // -1: every rank in turn
  int average = 1;         // 0 rank 0, 1 average, 2 minimum, 3 maximum
  int nranks = 0;          // -np; 0 when not given
  std::string transport;   // empty: MCL_TRANSPORT or the library's default
                           // (latency: the transports to compare)
  std::string algo;        // --algo: forced for this run's collective
  int timeoutSeconds = 0;  // 0: MCL_TIMEOUT or the library's default
  bool bindCores = true;   // -np ranks each on a core of their own
  // -R 1: buffers from mclMemAlloc, registered with every communicator
  // measured (same-host ranks then work in place, without copies).
  int registerBuffers = 0;
  std::string jsonPath;
  std::string csvPath;
  std::string dotPath;         // topo --dot FILE
  bool checkTopology = false;  // topo --check
  bool qualify = false;        // a benchmark's --qualify: qualify first
  bool sizesGiven = false;     // -b or -e on the command line
  bool itersGiven = false;     // -n on the command line
  bool warmupGiven = false;    // -w on the command line
  DecodeShape decode;          // tp and pp: the model, batch and type
  plan::PlanOptions plan;      // plan: the model and what to plan for
  std::vector<std::string> commandLine;
};

// latency's defaults: one size and many round trips.
constexpr size_t kDefaultLatencyBytes = 8;
constexpr int kDefaultLatencyRoundTrips = 1000;

// After the flags: each operation's defaults (latency's and tune's sizes
// and counts) and the checks that involve several flags.
bool finishOptions(Options* options, std::string* error);

// Checks what depends on the number of ranks (the root).
bool validateForRanks(const Options& options, int nranks, std::string* error);

// latency: the transports --transport lists (default shm, tcp and rdma).
std::vector<std::string> latencyTransports(const Options& options);

// "123", "4K", "1.5M", "2G" (powers of 1024, optional trailing B).
std::optional<size_t> parseSize(std::string_view text);

// The sizes to measure: minBytes, then times stepFactor (or plus
// stepBytes), up to maxBytes.
std::vector<size_t> sizeList(const Options& options);

}  // namespace mcl::perf
