// mcl-perf: benchmarks mcl's collectives the way nccl-tests benchmarks
// NCCL's, with the same table. Ranks are forked locally (-np N, or 2 by
// default) or, under a launcher (mpirun, srun, torchrun, mlx.launch, or
// mcl's MCL_RANK / MCL_ROOT / MCL_UNIQUE_ID), this process is one rank of
// the job, joined through mclCommInitFromEnv.
#include <mcl/mcl.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench/rank_runner.h"
#include "common/command_line.h"
#include "common/launcher.h"
#include "common/mcl_error.h"
#include "common/options.h"
#include "latency/latency_command.h"
#include "params/params_command.h"
#include "plan/plan_command.h"
#include "pp/pp_command.h"
#include "qualify/qualify_command.h"
#include "report/report_command.h"
#include "topo/topo_command.h"
#include "tp/tp_command.h"
#include "tune/tune_command.h"

namespace mcl::perf {

namespace {

constexpr int kDefaultLocalRanks = 2;

int usageError(const std::string& message,
               const std::string& hint = "Run 'mcl-perf --help' for usage.") {
  std::fprintf(stderr, "mcl-perf: %s\n%s\n", message.c_str(), hint.c_str());
  return kExitUsage;
}

// A launcher started this process as one rank of a job: mcl's own
// variables or those of mpirun, srun, torchrun or mlx.launch are set.
bool launchedAsRank() {
  for (const char* name :
       {"MCL_RANK", "MCL_UNIQUE_ID", "MCL_ROOT", "OMPI_COMM_WORLD_SIZE",
        "PMI_SIZE", "WORLD_SIZE", "MLX_RANK"})
    if (std::getenv(name) != nullptr) return true;
  const char* tasks = std::getenv("SLURM_NTASKS");
  return tasks != nullptr && std::strcmp(tasks, "1") != 0;
}

// Fails early, before any rank starts, when a report file cannot be made.
bool checkReportPath(const std::string& path, const char* what,
                     std::string* error) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    *error = std::string("cannot write the ") + what + " " + path + ": " +
             std::strerror(errno);
    return false;
  }
  std::fclose(f);
  return true;
}

int runCommand(const Options& options, const RankSetup& setup) {
  switch (options.command) {
    case Command::Topo:
      return runTopoRank(options, setup);
    case Command::Tune:
      return runTuneRank(options, setup);
    case Command::Latency:
      return runLatencyRank(options, setup);
    case Command::Qualify:
      return runQualifyRank(options, setup);
    case Command::Tp:
      return runTpRank(options, setup);
    case Command::Pp:
      return runPpRank(options, setup);
    case Command::Plan:
      return runPlanRank(options, setup);
    case Command::Params:  // runs before any rank starts
    case Command::Benchmark:
      break;
  }
  return runRank(options, setup);
}

int runExternal(const Options& options) {
  RankSetup setup;
  setup.fromEnvironment = true;
  // Rank 0 alone writes the JSON: check the path there, after init.
  const int code = runCommand(options, setup);
  return code == kExitOk ? kExitOk : kExitFailure;
}

// --algo NAME forces NAME for this run's collective through MCL_ALGO, after
// whatever MCL_ALGO already says (a later item wins). The library rejects a
// name the collective does not have, listing the ones it has.
void forceAlgorithm(const Options& options) {
  if (options.algo.empty() || options.algo == "all") return;
  const char* before = std::getenv("MCL_ALGO");
  std::string spec =
      before != nullptr && *before ? std::string(before) + ";" : std::string();
  spec += std::string(collectiveName(options.collective)) + ":" + options.algo;
  setenv("MCL_ALGO", spec.c_str(), 1);
}

int run(int argc, char** argv) {
  // `report` runs mcl-perf itself, step by step, with flags of its own.
  if (argc >= 2 && std::strcmp(argv[1], "report") == 0)
    return runReport(argc, argv);
  Options options;
  std::string error;
  std::string hint;
  switch (parseCommandLine(argc, argv, &options, &error, &hint)) {
    case ParseStatus::Done:
      return kExitOk;
    case ParseStatus::Error:
      return usageError(error, hint);
    case ParseStatus::Ok:
      break;
  }
  if (!finishOptions(&options, &error)) return usageError(error, hint);
  // Only the flags: scripts/check-docs.py checks the documented command
  // lines this way. (Not MCL_*: the library warns about MCL_* variables
  // it does not know.)
  const char* parseOnly = std::getenv("MCLPERF_PARSE_ONLY");
  const bool onlyParse = parseOnly != nullptr && *parseOnly == '1';
  if (options.command == Command::Params)
    return onlyParse ? kExitOk : printParams(options);
  if (options.command == Command::Plan && !options.plan.fromPath.empty())
    return onlyParse ? kExitOk : runPlanFromFile(options);

  int nranks = options.nranks;
  if (nranks == 0 && !launchedAsRank()) nranks = kDefaultLocalRanks;
  if (nranks != 0 && !validateForRanks(options, nranks, &error))
    return usageError(error, hint);
  if (onlyParse) return kExitOk;
  forceAlgorithm(options);
  if (nranks == 0) return runExternal(options);
  if (!options.jsonPath.empty() &&
      !checkReportPath(options.jsonPath, "JSON report", &error))
    return usageError(error);
  if (!options.csvPath.empty() &&
      !checkReportPath(options.csvPath, "CSV report", &error))
    return usageError(error);
  return launchLocalRanks(nranks, options.bindCores,
                          [&](int rank, const mclUniqueId& id) {
                            RankSetup setup;
                            setup.rank = rank;
                            setup.nranks = nranks;
                            setup.id = id;
                            return runCommand(options, setup);
                          });
}

}  // namespace

}  // namespace mcl::perf

int main(int argc, char** argv) {
  // Every line as it is printed, as nccl-tests does, so progress shows.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  return mcl::perf::run(argc, argv);
}
