// mcl-perf: benchmarks mcl's collectives the way nccl-tests benchmarks
// NCCL's, with the same table. Ranks are forked locally (-np N, or 2 by
// default) or, when MCL_UNIQUE_ID, MCL_RANK and MCL_WORLD_SIZE are set, this
// process is one rank of a job launched elsewhere.
#include <mcl/mcl.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "launcher.h"
#include "mcl_error.h"
#include "options.h"
#include "rank_runner.h"

namespace mcl::perf {

namespace {

constexpr int kDefaultLocalRanks = 2;

int usageError(const std::string& message) {
  std::fprintf(stderr, "mcl-perf: %s\nRun 'mcl-perf --help' for usage.\n",
               message.c_str());
  return kExitUsage;
}

std::optional<int> envInt(const char* text, int lo, int hi) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || v < lo || v > hi) return std::nullopt;
  return static_cast<int>(v);
}

// MCL_UNIQUE_ID, MCL_RANK and MCL_WORLD_SIZE, when all are set.
struct ExternalRank {
  std::string id;
  int rank = 0;
  int nranks = 0;
};

// Returns std::nullopt when the variables are not all set (and warns when
// only some are); sets *error when they are malformed.
std::optional<ExternalRank> externalRank(std::string* error) {
  const char* id = std::getenv("MCL_UNIQUE_ID");
  const char* rank = std::getenv("MCL_RANK");
  const char* size = std::getenv("MCL_WORLD_SIZE");
  const int set = (id ? 1 : 0) + (rank ? 1 : 0) + (size ? 1 : 0);
  if (set == 0) return std::nullopt;
  if (set < 3) {
    std::fprintf(stderr,
                 "mcl-perf: warning: MCL_UNIQUE_ID, MCL_RANK and "
                 "MCL_WORLD_SIZE are not all set; forking local ranks "
                 "instead\n");
    return std::nullopt;
  }
  ExternalRank ext;
  ext.id = id;
  std::optional<int> n = envInt(size, 1, 1 << 20);
  if (!n) {
    *error = "MCL_WORLD_SIZE='" + std::string(size) +
             "' is not a positive number of ranks";
    return ext;
  }
  ext.nranks = *n;
  std::optional<int> r = envInt(rank, 0, ext.nranks - 1);
  if (!r) {
    *error = "MCL_RANK='" + std::string(rank) + "' is not a rank from 0 to " +
             std::to_string(ext.nranks - 1);
    return ext;
  }
  ext.rank = *r;
  return ext;
}

// Fails early, before any rank starts, when the JSON file cannot be made.
bool checkJsonPath(const std::string& path, std::string* error) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    *error =
        "cannot write the JSON report " + path + ": " + std::strerror(errno);
    return false;
  }
  std::fclose(f);
  return true;
}

int runExternal(const Options& options, const ExternalRank& ext) {
  std::string error;
  if (!validateForRanks(options, ext.nranks, &error)) return usageError(error);
  if (ext.rank == 0 && !options.jsonPath.empty() &&
      !checkJsonPath(options.jsonPath, &error))
    return usageError(error);
  RankSetup setup;
  setup.rank = ext.rank;
  setup.nranks = ext.nranks;
  const mclResult_t r = mclUniqueIdFromString(ext.id.c_str(), &setup.id);
  if (r != mclSuccess) {
    const char* last = mclGetLastError(nullptr);
    const std::string detail = last ? last : "";
    std::fprintf(stderr,
                 "mcl-perf: rank %d: mclUniqueIdFromString failed: %s (%s)\n",
                 ext.rank, mclGetErrorString(r), detail.c_str());
    return kExitUsage;
  }
  const int code = runRank(options, setup);
  return code == kExitOk ? kExitOk : kExitFailure;
}

int run(int argc, char** argv) {
  Options options;
  std::string error;
  switch (parseOptions(argc, argv, &options, &error)) {
    case ParseStatus::Help:
      printUsage(stdout);
      return kExitOk;
    case ParseStatus::Error:
      return usageError(error);
    case ParseStatus::Ok:
      break;
  }

  int nranks = options.nranks;
  if (nranks == 0) {
    std::optional<ExternalRank> ext = externalRank(&error);
    if (!error.empty()) return usageError(error);
    if (ext) return runExternal(options, *ext);
    nranks = kDefaultLocalRanks;
  }
  if (!validateForRanks(options, nranks, &error)) return usageError(error);
  if (!options.jsonPath.empty() && !checkJsonPath(options.jsonPath, &error))
    return usageError(error);
  return launchLocalRanks(nranks, [&](int rank, const mclUniqueId& id) {
    RankSetup setup;
    setup.rank = rank;
    setup.nranks = nranks;
    setup.id = id;
    return runRank(options, setup);
  });
}

}  // namespace

}  // namespace mcl::perf

int main(int argc, char** argv) {
  // Every line as it is printed, as nccl-tests does, so progress shows.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  return mcl::perf::run(argc, argv);
}
