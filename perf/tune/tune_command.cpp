#include "tune/tune_command.h"

#include <nlohmann/json.hpp>
#include <optional>

#include <cstdio>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/join.h"
#include "common/mcl_error.h"

namespace mcl::perf {

namespace {

void printModel(mclComm_t comm, int nranks) {
  const nlohmann::json tuner =
      nlohmann::json::parse(topologyJson(comm, 0))["tuner"];
  std::printf(
      "# mcl-perf tune: %d ranks; link model %s%s: %.2f us per hop; moves "
      "%.1f GB/s and folds %.1f GB/s per rank (%.1f and %.1f up to %llu "
      "bytes); chunks of %llu bytes; %d wire(s) per pair\n",
      nranks, tuner.value("link_kind", "?").c_str(),
      tuner.value("probed", false) ? " (measured)" : "",
      tuner.value("alpha_us", 0.0), tuner.value("gbps", 0.0),
      tuner.value("reduce_gbps", 0.0), tuner.value("cached_gbps", 0.0),
      tuner.value("cached_reduce_gbps", 0.0),
      static_cast<unsigned long long>(tuner.value("cache_bytes", 0ull)),
      static_cast<unsigned long long>(tuner.value("chunk_bytes", 0ull)),
      tuner.value("wires", 1));
}

}  // namespace

int runTuneRank(const Options& options, const RankSetup& given) {
  RankSetup setup = given;
  mclComm_t comm = joinCommunicator(options, &setup);
  const std::optional<mclFunc_t> func = funcOf(options.collective);
  if (setup.rank == 0 && func) {
    printModel(comm, setup.nranks);
    std::vector<const char*> names;
    const char* name = nullptr;
    for (int i = 0; mclGetAlgorithmName(*func, i, &name) == mclSuccess && name;
         ++i)
      names.push_back(name);
    const mclDataType_t type = options.types.front();
    std::printf("# %s, %s: predicted time per call (us); * marks the pick\n",
                collectiveName(options.collective), typeName(type));
    std::printf("# %10s", "size");
    for (const char* n : names) std::printf("  %17s", n);
    std::printf("  %s\n", "pick");
    for (size_t bytes : sizeList(options)) {
      const CollCounts counts =
          collCounts(options.collective, bytes, typeSize(type), setup.nranks);
      const char* pick = nullptr;
      checkMcl(0, "mclCommGetAlgorithm",
               mclCommGetAlgorithm(comm, *func, counts.paramCount, type, &pick),
               comm);
      std::printf("%12zu", bytes);
      for (const char* n : names) {
        double us = 0;
        checkMcl(0, "mclCommPredict",
                 mclCommPredict(comm, *func, n, counts.paramCount, type, &us),
                 comm);
        std::printf("  %16.2f%s", us, std::string(n) == pick ? "*" : " ");
      }
      std::printf("  %s\n", pick);
    }
  }
  checkMcl(setup.rank, "mclCommDestroy", mclCommDestroy(comm), nullptr);
  return kExitOk;
}

}  // namespace mcl::perf
