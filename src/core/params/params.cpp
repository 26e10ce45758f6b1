#include "core/params/params.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "core/registry/transport_registry.h"
#include "platform/host_identity.h"

namespace mcl {

namespace {

constexpr ParamDef kParams[] = {
    {"MCL_DEBUG", "WARN", "Log level: NONE, WARN, INFO or TRACE."},
    {"MCL_DEBUG_SUBSYS", "ALL",
     "Subsystems whose INFO and TRACE messages to log, comma-separated "
     "(INIT, BOOTSTRAP, SHM, COLL, P2P, ENV, TOPO, ALL); a leading ^ "
     "excludes them. Warnings always show."},
    {"MCL_DEBUG_FILE", "",
     "Write the log to this file instead of stderr; %h is the host name, %p "
     "the process id."},
    {"MCL_TIMEOUT", "300",
     "Seconds any wait may last without progress (init, collectives, "
     "point-to-point) before it fails with mclTimeout."},
    {"MCL_PEER_TIMEOUT", "10",
     "Seconds without a heartbeat on the side channel before a peer counts "
     "as stopped (host down, every link gone, process stopped); a peer "
     "whose process dies is noticed within a second. 0: no side channel "
     "(deaths over RDMA then show at MCL_TIMEOUT)."},
    {"MCL_TRANSPORT", "auto",
     "Transport between peers: auto (shared memory within a host; between "
     "hosts RDMA on cables whose ends both have a usable RDMA device, TCP "
     "elsewhere, with a WARN for each pair RDMA should have joined and "
     "could not), shm (one host only), tcp (TCP for every pair) or rdma "
     "(RDMA between Macs, shared memory within one; init fails for a pair "
     "RDMA cannot join)."},
    {"MCL_ALGO", "",
     "Algorithms to force, e.g. 'allreduce:tree;allgather:ring', or a bare "
     "name for every collective that has it ('ring'). Empty or auto: the "
     "tuner chooses per call. Every rank must say the same."},
    {"MCL_TUNE_PROBE", "0",
     "1: measure the tuner's hop latency and bandwidth (in the caches and "
     "past them) with a few short collectives at init instead of using the "
     "defaults for the link kind; folding rates keep their defaults."},
    {"MCL_COMM_BLOCKING", "1",
     "0: mclCommInitRank(Config), mclCommSplit and mclCommFinalize return "
     "mclInProgress at once and finish in the background (poll "
     "mclCommGetAsyncError), as mclConfig_t.blocking = 0; a config's "
     "blocking field, when set, wins."},
    {"MCL_CHECK", "0",
     "1: before each collective the ranks compare the call (collective, "
     "type, op, count, root, place in a group); a mismatch fails on every "
     "rank, naming both calls. Costs a small all-gather per collective. "
     "Every rank must say the same."},
    {"MCL_SPIN_US", "auto",
     "Microseconds a waiting rank spins before yielding the CPU; auto spins "
     "less when ranks outnumber cores."},
    {"MCL_YIELD_US", "auto",
     "Microseconds a waiting rank yields the CPU before it sleeps in the OS "
     "(a wake-up then costs tens of microseconds)."},
    {"MCL_PEER_BUFFER_LIMIT", "8388608",
     "Most bytes one transport may hold for one peer (rings, pieces, "
     "frames); init fails, naming the settings, when they would need more."},
    {"MCL_ZERO_COPY_MIN_BYTES", "65536",
     "Calls among ranks that share one host, of at least this many bytes "
     "(a rank's larger buffer), run in place when every buffer they need "
     "is mclMemAlloc memory; smaller calls copy through the rings. 0 turns "
     "zero-copy off. Every rank must say the same."},
    {"MCL_TOPO_FILE", "",
     "Read the cluster (hosts, cables) from this file: mcl's own dump, an "
     "MLX device matrix or an MLX hostfile. Unset: MLX_IBV_DEVICES "
     "(mlx.launch's device matrix), if set. Detection still runs: where "
     "the file lists cables detection does not see (or the reverse), init "
     "says so and follows detection, unless MCL_TOPO_FILE_FORCE=1."},
    {"MCL_TOPO_FILE_FORCE", "0",
     "1: follow MCL_TOPO_FILE even where detection sees other cables (to "
     "keep traffic off a cable, or where detection cannot see them); the "
     "differences are still reported."},
    {"MCL_TOPO_DETECT", "auto",
     "auto: look at interfaces and Thunderbolt ports when the job spans "
     "hosts or MCL_TOPO_DUMP_FILE is set; always: also for one host."},
    {"MCL_TOPO_DUMP_FILE", "",
     "Rank 0 writes the detected cluster here as JSON after init."},
    {"MCL_UNIQUE_ID", "",
     "A unique id in string form (mclUniqueIdToString), for "
     "mclCommInitFromEnv with MCL_RANK and MCL_WORLD_SIZE."},
    {"MCL_RANK", "",
     "This process' rank, for mclCommInitFromEnv (and mcl-perf under a "
     "launcher)."},
    {"MCL_WORLD_SIZE", "", "The number of ranks, for mclCommInitFromEnv."},
    {"MCL_ROOT", "",
     "host:port where rank 0 runs the rendezvous, for mclCommInitFromEnv."},
    {"MCL_SECRET", "",
     "32 hex digits shared by the ranks of an MCL_ROOT job; without it the "
     "secret is derived from the job, which is weaker."},
    {"MCL_TORCH_BACKEND", "auto",
     "mcl.torch's process groups: auto (the C++ backend where it was built "
     "for the installed torch, else the Python one) or python."},
};

std::optional<ParamDef> findParam(const char* name) {
  for (const ParamDef& p : allParams())
    if (strcmp(p.name, name) == 0) return p;
  return std::nullopt;
}

class EnvironmentParams final : public ParamSource {
 public:
  std::string text(const char* name) const override {
    return paramValue(name).text;
  }
  int64_t integer(const char* name, int64_t min, int64_t max) const override {
    return paramInt(name, min, max);
  }
};

}  // namespace

std::vector<ParamDef> allParams() {
  std::vector<ParamDef> all(std::begin(kParams), std::end(kParams));
  for (const TransportEntry& t : transportRegistry())
    if (t.params != nullptr)
      for (const ParamDef& p : t.params()) all.push_back(p);
  return all;
}

const ParamSource& environmentParams() {
  static const EnvironmentParams params;
  return params;
}

ParamValue paramValue(const char* name) {
  std::optional<ParamDef> def = findParam(name);
  if (!def)
    throw error(mclInternalError, "parameter %s is not registered", name);
  const char* env = getenv(name);
  if (env != nullptr && *env != '\0') return {env, "env"};
  return {def->defaultValue, "default"};
}

int64_t paramInt(const char* name, int64_t min, int64_t max) {
  ParamValue v = paramValue(name);
  errno = 0;
  char* end = nullptr;
  long long n = strtoll(v.text.c_str(), &end, 10);
  if (errno != 0 || end == v.text.c_str() || *end != '\0' || n < min || n > max)
    throw error(mclInvalidArgument,
                "%s='%s' is not an integer between %lld and %lld", name,
                v.text.c_str(), static_cast<long long>(min),
                static_cast<long long>(max));
  return n;
}

namespace {

// MCL_* names the project's own scripts set that are not library
// parameters: the CI's warnings-as-errors switch and the test suites' path
// of mcl-perf. They are no typos.
bool isScriptVariable(const std::string& name) {
  return name == "MCL_WERROR" || name == "MCL_PERF";
}

}  // namespace

void warnUnknownEnvironment() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (char** e = platform::environment(); e != nullptr && *e != nullptr;
         ++e) {
      if (strncmp(*e, "MCL_", 4) != 0) continue;
      const char* eq = strchr(*e, '=');
      std::string name(*e, eq ? static_cast<size_t>(eq - *e) : strlen(*e));
      if (!findParam(name.c_str()) && !isScriptVariable(name))
        MCL_LOG(Warn, kLogEnv,
                "environment variable %s is not an mcl parameter (a typo?); "
                "docs/parameters.md lists the parameters",
                name.c_str());
    }
  });
}

}  // namespace mcl
