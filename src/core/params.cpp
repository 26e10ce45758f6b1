#include "core/params.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <span>

#include "base/error.h"
#include "base/log.h"
#include "platform/host_identity.h"

namespace mcl {

namespace {

constexpr ParamDef kParams[] = {
    {"MCL_DEBUG", "WARN", "Log level: NONE, WARN, INFO or TRACE."},
    {"MCL_DEBUG_SUBSYS", "ALL",
     "Subsystems to log, comma-separated (INIT, BOOTSTRAP, SHM, COLL, P2P, "
     "ENV, ALL); a leading ^ excludes them."},
    {"MCL_DEBUG_FILE", "",
     "Write the log to this file instead of stderr; %h is the host name, %p "
     "the process id."},
    {"MCL_TIMEOUT", "300",
     "Seconds any wait may last without progress (init, collectives, "
     "point-to-point) before it fails with mclTimeout."},
    {"MCL_TRANSPORT", "auto",
     "Transport between peers: auto (shared memory within a host, TCP "
     "between hosts), shm (one host only) or tcp (TCP for every peer)."},
    {"MCL_SOCKET_IFNAME", "",
     "Interfaces TCP may use, NCCL's syntax: prefixes 'en,eth', '^' to "
     "exclude ('^docker,lo'), '=' for exact names ('=en2'). Empty: "
     "Thunderbolt-style point-to-point links first, then any other."},
    {"MCL_TCP_NSOCKS", "2",
     "TCP sockets per link (cable) between two ranks; pieces are striped "
     "over them. 2 measured best on loopback (64 MiB all-reduce: 1 socket "
     "1.87, 2 sockets 2.07, 4 sockets 2.03 GB/s busbw)."},
    {"MCL_TCP_SLOT_BYTES", "131072",
     "Size of one TCP piece (a multiple of 64): the pipelining chunk of "
     "large transfers."},
    {"MCL_TCP_SLOTS", "8", "TCP pieces buffered per peer and direction."},
    {"MCL_SHM_SLOT_BYTES", "65536",
     "Size of one slot of a shared-memory ring, in bytes (a multiple of 64): "
     "the pipelining chunk of large transfers."},
    {"MCL_SHM_RING_STORES", "auto",
     "How a rank writes pieces of 16 KiB and more into a shared-memory "
     "ring (x86-64): auto (plain or non-temporal stores, whichever its "
     "recent writes found cheaper, non-temporal only when at least twice "
     "as cheap: it depends on how far apart the two cores are), plain or "
     "stream."},
    {"MCL_SHM_SLOTS", "8",
     "Slots per shared-memory ring, one ring per ordered pair of local "
     "ranks."},
    {"MCL_ALGO", "",
     "Algorithms to force, e.g. 'allreduce:tree;allgather:ring', or a bare "
     "name for every collective that has it ('ring'). Empty or auto: the "
     "tuner chooses per call. Every rank must say the same."},
    {"MCL_TUNE_PROBE", "0",
     "1: measure the tuner's hop latency and bandwidth (in the caches and "
     "past them) with a few short collectives at init instead of using the "
     "defaults for the link kind; folding rates keep their defaults."},
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
    {"MCL_RDMA_PROVIDER", "ibverbs",
     "ibverbs: the system's verbs library; emu: the emulated Thunderbolt "
     "fabric MCL_EMU_FABRIC describes (tests)."},
    {"MCL_RDMA_LIBRARY", "",
     "The verbs library to load (default librdma.dylib on macOS, "
     "libibverbs.so.1 on Linux)."},
    {"MCL_RDMA_FRAME_BYTES", "4096",
     "Bytes per RDMA frame (64-byte header included), a multiple of 64."},
    {"MCL_RDMA_DEPTH", "32", "Receives (and sends) posted per RDMA wire."},
    {"MCL_RDMA_QP", "uc", "Queue-pair type: uc (Thunderbolt) or rc."},
    {"MCL_PEER_BUFFER_LIMIT", "8388608",
     "Most bytes one transport may hold for one peer (rings, pieces, "
     "frames); init fails, naming the settings, when they would need more."},
    {"MCL_ZERO_COPY_MIN_BYTES", "65536",
     "Calls among ranks that share one host, of at least this many bytes "
     "(a rank's larger buffer), run in place when every buffer they need "
     "is mclMemAlloc memory; smaller calls copy through the rings. 0 turns "
     "zero-copy off. Every rank must say the same."},
    {"MCL_RDMA_DEVICES", "",
     "RDMA devices this rank may use, comma-separated ('rdma_en2,rdma_en3'); "
     "cables on other devices are left out. Empty: every cabled device. "
     "Both ends of a pair must keep the same cables (mcl-perf qualify "
     "tests one cable at a time this way)."},
    {"MCL_EMU_FABRIC", "",
     "The emulated fabric's cabling: a JACCL device matrix, one row per "
     "rank."},
    {"MCL_EMU_LATENCY_US", "2", "Emulated cable latency, one way."},
    {"MCL_EMU_GBPS", "60", "Emulated cable bandwidth per direction, Gb/s."},
    {"MCL_EMU_FAULTS", "",
     "Emulated faults: port_down:MAC:DEVICE@MS[;...] takes that cable down "
     "MS after init."},
    {"MCL_TOPO_FILE", "",
     "Read the cluster (hosts, cables) from this file instead of detecting "
     "it: mcl's own dump, an MLX device matrix or an MLX hostfile. Unset: "
     "MLX_IBV_DEVICES (mlx.launch's device matrix), if set."},
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
};

const ParamDef* findParam(const char* name) {
  for (const auto& p : kParams)
    if (strcmp(p.name, name) == 0) return &p;
  return nullptr;
}

}  // namespace

std::span<const ParamDef> allParams() { return kParams; }

ParamValue paramValue(const char* name) {
  const ParamDef* def = findParam(name);
  if (def == nullptr)
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
      if (findParam(name.c_str()) == nullptr && !isScriptVariable(name))
        MCL_LOG(Warn, kLogEnv,
                "environment variable %s is not an mcl parameter (a typo?); "
                "README.md lists the parameters",
                name.c_str());
    }
  });
}

}  // namespace mcl
