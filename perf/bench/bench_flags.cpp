#include "bench/bench_flags.h"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/flag_sets.h"
#include "common/options.h"

namespace mcl::perf {

namespace {

// A flag of nccl-tests whose values mean something only for some values
// on mcl (CUDA devices, graphs, per-thread ranks): `accepted` is the
// largest value that means what mcl-perf does; a larger one is refused
// with what to use instead.
void addNcclTestsFlag(
    CLI::App* command, const std::string& names, const std::string& help,
    int accepted, const std::string& instead,
    std::function<void(int)> set = [](int) {}) {
  addIntFlag(
      command, names, 0, std::numeric_limits<int>::max(),
      [=](int value) {
        if (value > accepted) {
          std::string shown = names;
          for (char& c : shown)
            if (c == ',') c = '/';
          throw CLI::ValidationError(shown + " " + std::to_string(value) +
                                     ": " + instead);
        }
        set(value);
      },
      help)
      ->group("nccl-tests flags");
}

void addNcclTestsFlags(CLI::App* command, Options* o) {
  const std::string perProcess =
      "mcl-perf runs one rank per process (there are no GPUs to give each "
      "thread): start the ranks with -np N (N = processes x -t x -g in "
      "nccl-tests' terms) or under a launcher";
  addNcclTestsFlag(command, "-t,--nthreads",
                   "threads per process: 1 (one rank per process)", 1,
                   perProcess);
  addNcclTestsFlag(command, "-g,--ngpus",
                   "devices per thread: 1 (a rank is a process on the CPU)", 1,
                   perProcess);
  addNcclTestsFlag(
      command, "-G,--cudagraph",
      "CUDA graph launches: 0 (mcl has no graphs to capture)", 0,
      "mcl has no CUDA graphs to capture and replay: leave -G out (or -G 0)");
  addNcclTestsFlag(
      command, "-p,--parallel_init",
      "1: initialise in parallel; with one rank per process there is "
      "nothing to run in parallel (recorded in the JSON)",
      1, "takes 0 or 1", [o](int v) { o->parallelInit = v != 0; });
  addNcclTestsFlag(
      command, "-C,--report_cputime",
      "1: the time column says cputime; mcl-perf's time is the host's "
      "wall clock either way (there are no device events)",
      1, "takes 0 or 1", [o](int v) { o->cpuTime = v != 0; });
  addNcclTestsFlag(
      command, "-y,--stream_null",
      "1: the NULL stream, which mcl-perf's calls always use (they are "
      "synchronous)",
      1, "takes 0 or 1");
  addNcclTestsFlag(command, "-M,--memory",
                   "1: the memory line, which mcl-perf always prints at the "
                   "end",
                   1, "takes 0 or 1");
  addNcclTestsFlag(command, "-I,--per_iter_timing",
                   "0 (per-call percentiles: mcl-perf latency)", 0,
                   "per-iteration timing is not in the benchmark's table: "
                   "'mcl-perf latency' times each round trip and prints the "
                   "median and p99");
  addNcclTestsFlag(command, "-K,--per_iter_skip", "0 (goes with -I)", 0,
                   "goes with -I, which mcl-perf does not have: see "
                   "'mcl-perf latency'");
  addNcclTestsFlag(command, "-S,--report_timestamps",
                   "0 (the JSON report has the start and end time)", 0,
                   "no timestamp column: -J FILE records the run's start "
                   "and end time");
  addNcclTestsFlag(command, "-u,--unalign", "0 (buffers are page-aligned)", 0,
                   "mcl-perf's buffers are always page-aligned: leave -u out");
  addNcclTestsFlag(command, "-x,--cta_policy", "not used (CUDA CTAs)", -1,
                   "a CUDA CTA policy: mcl runs on the CPU; leave -x out");
  addNcclTestsFlag(command, "-D,--device_implementation",
                   "0 (CUDA device kernels)", 0,
                   "CUDA device-API kernels: mcl runs on the CPU; leave -D "
                   "out");
  addNcclTestsFlag(command, "-V,--device_cta_count", "not used (CUDA CTAs)", -1,
                   "CUDA CTAs: mcl runs on the CPU; leave -V out");
  addIntFlag(
      command, "-m,--agg_iters", 1, 1 << 20, [o](int n) { o->aggIters = n; },
      "calls per timed iteration, in one mclGroupStart/End (the time is "
      "per call)")
      ->group("nccl-tests flags");
  addIntFlag(
      command, "-N,--run_cycles", 0, 1 << 30, [o](int n) { o->runCycles = n; },
      "run the whole sweep N times; 0: until interrupted")
      ->group("nccl-tests flags");
  addIntFlag(
      command, "-z,--blocking", 0, 3, [o](int n) { o->blocking = n; },
      "0 and 2: each call returns when done (mcl-perf's calls are "
      "synchronous); 1: also a barrier after each timed iteration; 3: a "
      "barrier after each timed iteration, left out of the time")
      ->group("nccl-tests flags");
}

}  // namespace

void addBenchmarkFlags(CLI::App* command, Options* o) {
  addSizeFlags(command, o, "32M", "32M");
  addIterationFlags(command, o, "20", "5; nccl-tests' is 1");
  addIntFlag(
      command, "-c,--check", 0, 1 << 20, [o](int n) { o->check = n; },
      "check the results N times per size; 0: off (#wrong shows N/A)");
  addDatatypeFlag(command, o, true);
  command
      ->add_option_function<std::string>(
          "-o,--op",
          [o](const std::string& value) {
            const std::optional<std::vector<mclRedOp_t>> ops = parseOps(value);
            if (!ops)
              throw CLI::ValidationError("unknown reduction op '" + value +
                                         "' for -o/--op: expected one of " +
                                         opNameList() + " or all");
            o->ops = *ops;
            o->opArg = value;
          },
          "reduction: " + opNameList() +
              " or all (default sum; mulsum: mclRedOpCreatePreMulSum's op)")
      ->type_name("OP");
  command
      ->add_option_function<std::string>(
          "-r,--root",
          [o](const std::string& value) {
            if (value == "all") {
              o->root = -1;
              return;
            }
            char* end = nullptr;
            const long v = std::strtol(value.c_str(), &end, 10);
            if (value.empty() || *end != '\0' || v < -1 ||
                v > std::numeric_limits<int>::max())
              throw CLI::ValidationError("invalid value '" + value +
                                         "' for -r/--root: a rank, or all "
                                         "(or -1) for every rank in turn");
            o->root = static_cast<int>(v);
          },
          "root of broadcast and reduce, or all (default 0)")
      ->type_name("ROOT");
  addIntFlag(
      command, "-a,--average", 0, 3, [o](int n) { o->average = n; },
      "time shown: 0 rank 0's, 1 the average, 2 the minimum, 3 the maximum "
      "over the ranks (default 1)");
  addIntFlag(
      command, "-R,--register,--local_register", 0, 2,
      [o](int n) {
        if (n == 2)
          throw CLI::ValidationError(
              "-R 2 registers NCCL's symmetric windows, which mcl does not "
              "have: -R 1 registers the buffers with mclCommRegister");
        o->registerBuffers = n;
      },
      "1: buffers from mclMemAlloc, registered with mclCommRegister; ranks "
      "of one host then work in place (algo column: zero_copy)");
  addRankFlags(command, o,
               "mclConfig_t.transport, e.g. auto or shm (default "
               "MCL_TRANSPORT, else auto)");
  addTextFlag(
      command, "--algo", [o](const std::string& value) { o->algo = value; },
      "force the collective's algorithm (sets MCL_ALGO); all: the tuner's and "
      "every algorithm, size by size; the last column shows the one used",
      "NAME|all");
  command->add_flag("--qualify", o->qualify,
                    "run `mcl-perf qualify` first (exit 1 at the end when it "
                    "fails)");
  addReportFlags(command, o, true);
  addNcclTestsFlags(command, o);
}

}  // namespace mcl::perf
