#include "common/options.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/dtype.h"

namespace mcl::perf {

namespace {

constexpr int kMaxLocalRanks = 1024;
constexpr double kMaxSize = 1ull << 50;  // 1 PiB: anything larger is a typo

enum class Flag {
  MinBytes,
  MaxBytes,
  StepBytes,
  StepFactor,
  Iters,
  WarmupIters,
  Check,
  Datatype,
  Op,
  Root,
  Average,
  Timeout,
  Ranks,
  Transport,
  Algo,
  Bind,
  Register,
  Json,
  Csv,
  Dot,
  Help,
};

struct FlagSpec {
  Flag flag;
  char shortName;  // 0: none
  const char* longName;
};

constexpr FlagSpec kFlags[] = {
    {Flag::MinBytes, 'b', "minbytes"},
    {Flag::MaxBytes, 'e', "maxbytes"},
    {Flag::StepBytes, 'i', "stepbytes"},
    {Flag::StepFactor, 'f', "stepfactor"},
    {Flag::Iters, 'n', "iters"},
    {Flag::WarmupIters, 'w', "warmup_iters"},
    {Flag::Check, 'c', "check"},
    {Flag::Datatype, 'd', "datatype"},
    {Flag::Op, 'o', "op"},
    {Flag::Root, 'r', "root"},
    {Flag::Average, 'a', "average"},
    {Flag::Timeout, 'T', "timeout"},
    {Flag::Ranks, 0, "np"},
    {Flag::Transport, 0, "transport"},
    {Flag::Algo, 0, "algo"},
    {Flag::Bind, 0, "bind"},
    {Flag::Register, 'R', "register"},
    {Flag::Json, 'J', "json"},
    {Flag::Csv, 0, "csv"},
    {Flag::Dot, 0, "dot"},
    {Flag::Help, 'h', "help"},
};

const FlagSpec* findLong(std::string_view name) {
  for (const auto& f : kFlags)
    if (name == f.longName) return &f;
  return nullptr;
}

const FlagSpec* findShort(char name) {
  for (const auto& f : kFlags)
    if (f.shortName != 0 && name == f.shortName) return &f;
  return nullptr;
}

std::optional<long long> parseInt(std::string_view text) {
  std::string s(text);
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return v;
}

// Parses an integer flag value within [lo, hi].
bool intValue(std::string_view flag, std::string_view text, long long lo,
              long long hi, int* out, std::string* error) {
  std::optional<long long> v = parseInt(text);
  if (!v || *v < lo || *v > hi) {
    *error = "invalid value '" + std::string(text) + "' for " +
             std::string(flag) + ": expected an integer from " +
             std::to_string(lo) + " to " + std::to_string(hi);
    return false;
  }
  *out = static_cast<int>(*v);
  return true;
}

bool sizeValue(std::string_view flag, std::string_view text, size_t* out,
               std::string* error) {
  std::optional<size_t> v = parseSize(text);
  if (!v) {
    *error = "invalid size '" + std::string(text) + "' for " +
             std::string(flag) +
             ": expected a whole number of bytes with an optional K, M or G "
             "suffix";
    return false;
  }
  *out = *v;
  return true;
}

bool applyFlag(const FlagSpec& spec, std::string_view flag,
               std::string_view value, Options* o, std::string* error) {
  int n = 0;
  switch (spec.flag) {
    case Flag::MinBytes:
      o->sizesGiven = true;
      return sizeValue(flag, value, &o->minBytes, error);
    case Flag::MaxBytes:
      o->sizesGiven = true;
      return sizeValue(flag, value, &o->maxBytes, error);
    case Flag::StepBytes:
      return sizeValue(flag, value, &o->stepBytes, error);
    case Flag::StepFactor:
      if (!intValue(flag, value, 1, 1 << 30, &n, error)) return false;
      o->stepFactor = static_cast<size_t>(n);
      return true;
    case Flag::Iters:
      o->itersGiven = true;
      return intValue(flag, value, 1, 1 << 30, &o->iters, error);
    case Flag::WarmupIters:
      o->warmupGiven = true;
      return intValue(flag, value, 0, 1 << 30, &o->warmupIters, error);
    case Flag::Check:
      return intValue(flag, value, 0, 1 << 20, &o->check, error);
    case Flag::Average:
      return intValue(flag, value, 0, 3, &o->average, error);
    case Flag::Register:
      return intValue(flag, value, 0, 1, &o->registerBuffers, error);
    case Flag::Timeout:
      return intValue(flag, value, 1, 1 << 30, &o->timeoutSeconds, error);
    case Flag::Ranks:
      return intValue(flag, value, 1, kMaxLocalRanks, &o->nranks, error);
    case Flag::Root:
      if (value == "all") {
        o->root = -1;
        return true;
      }
      return intValue(flag, value, -1, std::numeric_limits<int>::max(),
                      &o->root, error);
    case Flag::Datatype: {
      auto types = parseTypes(value);
      if (!types) {
        *error = "unknown data type '" + std::string(value) + "' for " +
                 std::string(flag) + ": expected one of " + typeNameList() +
                 " or all";
        return false;
      }
      o->types = *types;
      o->datatypeArg = value;
      return true;
    }
    case Flag::Op: {
      auto ops = parseOps(value);
      if (!ops) {
        *error = "unknown reduction op '" + std::string(value) + "' for " +
                 std::string(flag) + ": expected one of " + opNameList() +
                 " or all";
        return false;
      }
      o->ops = *ops;
      o->opArg = value;
      return true;
    }
    case Flag::Transport:
      if (value.empty()) {
        *error = "empty value for " + std::string(flag);
        return false;
      }
      o->transport = value;
      return true;
    case Flag::Algo:
      if (value.empty()) {
        *error = "empty value for " + std::string(flag);
        return false;
      }
      o->algo = value;
      return true;
    case Flag::Bind:
      if (value != "core" && value != "none") {
        *error = "--bind takes core or none, not '" + std::string(value) + "'";
        return false;
      }
      o->bindCores = value == "core";
      return true;
    case Flag::Json:
      if (value.empty()) {
        *error = "empty file name for " + std::string(flag);
        return false;
      }
      o->jsonPath = value;
      return true;
    case Flag::Csv:
      if (value.empty()) {
        *error = "empty file name for " + std::string(flag);
        return false;
      }
      o->csvPath = value;
      return true;
    case Flag::Dot:
      if (value.empty()) {
        *error = "empty file name for " + std::string(flag);
        return false;
      }
      o->dotPath = value;
      return true;
    case Flag::Help:
      break;
  }
  return true;
}

// latency: 8 bytes, 1000 round trips after 100 untimed, unless the flags
// say otherwise; --transport lists the transports to compare.
bool finishLatency(Options* o, std::string* error) {
  if (!o->sizesGiven) o->minBytes = o->maxBytes = kDefaultLatencyBytes;
  if (!o->itersGiven) o->iters = kDefaultLatencyRoundTrips;
  if (!o->warmupGiven) o->warmupIters = std::max(1, o->iters / 10);
  const std::vector<std::string> names = latencyTransports(*o);
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] != "shm" && names[i] != "tcp" && names[i] != "rdma") {
      *error = "latency --transport: '" + names[i] +
               "' is not a transport; list some of shm, tcp and rdma, "
               "separated by commas";
      return false;
    }
    for (size_t j = 0; j < i; ++j)
      if (names[j] == names[i]) {
        *error = "latency --transport: " + names[i] + " is listed twice";
        return false;
      }
  }
  return true;
}

bool validate(const Options& o, bool haveCollective, std::string* error) {
  if (!haveCollective) {
    *error = std::string("missing the operation: one of ") +
             collectiveNameList() + ", topo, tune, params, latency, qualify";
    return false;
  }
  if (!o.dotPath.empty() && o.command != Command::Topo) {
    *error = "--dot goes with topo";
    return false;
  }
  if (!o.algo.empty() &&
      (o.command != Command::Benchmark || !funcOf(o.collective))) {
    *error =
        "--algo goes with a collective that has algorithms to choose: "
        "allreduce, allgather, broadcast, reduce, reducescatter, alltoall";
    return false;
  }
  if (o.minBytes > o.maxBytes) {
    *error = "minbytes (" + std::to_string(o.minBytes) +
             ") is larger than maxbytes (" + std::to_string(o.maxBytes) + ")";
    return false;
  }
  if (o.stepFactor <= 1 && o.stepBytes == 0 && o.minBytes < o.maxBytes) {
    *error = "stepbytes is 0 with stepfactor 1: the size would never grow";
    return false;
  }
  return true;
}

}  // namespace

std::optional<size_t> parseSize(std::string_view text) {
  std::string s(text);
  if (s.empty() || !(s[0] >= '0' && s[0] <= '9')) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end == s.c_str()) return std::nullopt;
  double unit = 1;
  switch (*end) {
    case 'k':
    case 'K':
      unit = 1024.0;
      ++end;
      break;
    case 'm':
    case 'M':
      unit = 1024.0 * 1024.0;
      ++end;
      break;
    case 'g':
    case 'G':
      unit = 1024.0 * 1024.0 * 1024.0;
      ++end;
      break;
    default:
      break;
  }
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0') return std::nullopt;
  const double bytes = v * unit;
  if (!(bytes >= 0) || bytes > kMaxSize || bytes != std::floor(bytes))
    return std::nullopt;
  return static_cast<size_t>(bytes);
}

ParseStatus parseOptions(int argc, char** argv, Options* o,
                         std::string* error) {
  o->commandLine.assign(argv, argv + argc);
  bool haveCollective = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    const FlagSpec* spec = nullptr;
    std::string_view flag = arg;
    std::optional<std::string_view> value;
    if (arg == "--qualify") {  // a switch: takes no value
      o->qualify = true;
      continue;
    }
    if (arg.starts_with("--") || arg.starts_with("-np")) {
      // --name, --name=value, -np, -np=value (-np is not a cluster of
      // short flags, as for mpirun).
      std::string_view body = arg.substr(arg[1] == '-' ? 2 : 1);
      size_t eq = body.find('=');
      spec = findLong(body.substr(0, eq));
      flag =
          arg.substr(0, arg.size() - body.size() + std::min(eq, body.size()));
      if (eq != std::string_view::npos) value = body.substr(eq + 1);
    } else if (arg.size() >= 2 && arg[0] == '-') {
      spec = findShort(arg[1]);
      flag = arg.substr(0, 2);
      if (arg.size() > 2) value = arg.substr(2);
    } else if (arg == "topo" && !haveCollective) {
      o->command = Command::Topo;
      haveCollective = true;
      continue;
    } else if (arg == "params" && !haveCollective &&
               o->command == Command::Benchmark) {
      o->command = Command::Params;
      haveCollective = true;
      continue;
    } else if (arg == "qualify" && !haveCollective &&
               o->command == Command::Benchmark) {
      o->command = Command::Qualify;
      haveCollective = true;
      continue;
    } else if (arg == "latency" && !haveCollective &&
               o->command == Command::Benchmark) {
      o->command = Command::Latency;
      haveCollective = true;
      continue;
    } else if (arg == "tune" && !haveCollective &&
               o->command == Command::Benchmark) {
      o->command = Command::Tune;  // a collective may follow
      continue;
    } else {
      std::optional<Collective> c = parseCollective(arg);
      if (!c || haveCollective) {
        *error = haveCollective
                     ? "unexpected argument '" + std::string(arg) + "'"
                     : "unknown operation '" + std::string(arg) +
                           "': expected one of " + collectiveNameList() +
                           ", topo, tune, params, latency, qualify";
        return ParseStatus::Error;
      }
      o->collective = *c;
      haveCollective = true;
      continue;
    }
    if (!spec) {
      *error = "unknown flag '" + std::string(arg) + "'";
      return ParseStatus::Error;
    }
    // `topo --check` is a switch; the benchmarks' -c/--check takes a count.
    if (spec->flag == Flag::Check && o->command == Command::Topo &&
        arg == "--check") {
      o->checkTopology = true;
      continue;
    }
    if (spec->flag == Flag::Help) {
      if (value) {
        *error = std::string(flag) + " takes no value";
        return ParseStatus::Error;
      }
      return ParseStatus::Help;
    }
    if (!value) {
      if (i + 1 >= argc) {
        *error = "missing value for " + std::string(flag);
        return ParseStatus::Error;
      }
      value = argv[++i];
    }
    if (!applyFlag(*spec, flag, *value, o, error)) return ParseStatus::Error;
  }
  if (o->command == Command::Tune) {
    // tune: all-reduce unless named, and 8 B to 64 MiB by factors of 2
    // unless sizes are given.
    haveCollective = true;
    if (!o->sizesGiven) {
      o->minBytes = 8;
      o->maxBytes = size_t{64} << 20;
      if (o->stepFactor == 1) o->stepFactor = 2;
    }
    if (!funcOf(o->collective)) {
      *error = "tune: sendrecv has no algorithms to choose from";
      return ParseStatus::Error;
    }
  }
  if (o->command == Command::Latency && !finishLatency(o, error))
    return ParseStatus::Error;
  if (o->command == Command::Qualify && !o->transport.empty() &&
      o->transport != "tcp" && o->transport != "rdma") {
    *error = "qualify --transport: tcp or rdma (the cables' transport), not '" +
             o->transport + "'";
    return ParseStatus::Error;
  }
  if (o->qualify && o->command != Command::Benchmark) {
    *error =
        "--qualify goes with a benchmark (allreduce --qualify); run "
        "'mcl-perf qualify' on its own";
    return ParseStatus::Error;
  }
  return validate(*o, haveCollective, error) ? ParseStatus::Ok
                                             : ParseStatus::Error;
}

std::vector<std::string> latencyTransports(const Options& o) {
  std::vector<std::string> names;
  std::string_view list = "shm,tcp,rdma";
  if (!o.transport.empty()) list = o.transport;
  for (;;) {  // "a,,b" and "a," hold empty names, which are refused
    const size_t comma = list.find(',');
    names.emplace_back(list.substr(0, comma));
    if (comma == std::string_view::npos) return names;
    list = list.substr(comma + 1);
  }
}

bool validateForRanks(const Options& o, int nranks, std::string* error) {
  if (o.command == Command::Latency && nranks < 2) {
    *error = "latency times pairs of ranks: run at least 2 (-np 2)";
    return false;
  }
  if (!collectiveInfo(o.collective).hasRoot || o.root < nranks) return true;
  *error = "root " + std::to_string(o.root) + " is not a rank: there are " +
           std::to_string(nranks) + " ranks";
  return false;
}

std::vector<size_t> sizeList(const Options& o) {
  std::vector<size_t> sizes;
  size_t size = o.minBytes;
  while (size <= o.maxBytes) {
    sizes.push_back(size);
    size_t next;
    if (o.stepFactor > 1) {
      if (size > o.maxBytes / o.stepFactor) break;
      next = size * o.stepFactor;
    } else {
      if (size > o.maxBytes - o.stepBytes) break;
      next = size + o.stepBytes;
    }
    if (next <= size) break;  // 0 times a factor stays 0
    size = next;
  }
  return sizes;
}

void printUsage(std::FILE* out) {
  std::fprintf(
      out,
      "Usage: mcl-perf OPERATION [flags]\n"
      "Benchmarks one mcl operation the way nccl-tests does and prints the\n"
      "same table.\n"
      "\n"
      "OPERATION: %s\n"
      "\n"
      "Flags (as in nccl-tests):\n"
      "  -b, --minbytes SIZE      smallest size (default 32M)\n"
      "  -e, --maxbytes SIZE      largest size (default 32M)\n"
      "  -i, --stepbytes SIZE     size increment when stepfactor is 1 "
      "(default 1M)\n"
      "  -f, --stepfactor N       multiply the size by N (default 1: add "
      "stepbytes)\n"
      "  -n, --iters N            timed iterations per size (default 20)\n"
      "  -w, --warmup_iters N     warmup iterations (default 5)\n"
      "  -c, --check N            check the results N times per size, 0 "
      "off (default 1)\n"
      "  -d, --datatype TYPE      %s or all (default float)\n"
      "  -o, --op OP              %s or all (default sum)\n"
      "  -r, --root ROOT          root of broadcast and reduce, or all "
      "(default 0)\n"
      "  -a, --average N          time shown: 0 rank 0, 1 average, 2 "
      "minimum, 3 maximum\n"
      "                           over the ranks (default 1)\n"
      "  -T, --timeout SECONDS    bound on every wait "
      "(mclConfig_t.timeoutSeconds;\n"
      "                           default MCL_TIMEOUT)\n"
      "  -R, --register 0|1       1: buffers from mclMemAlloc, registered "
      "with\n"
      "                           mclCommRegister; ranks of one host then "
      "work in\n"
      "                           place (algo column: zero_copy)\n"
      "  -h, --help               this help\n"
      "mcl flags:\n"
      "  -np N                    fork N local ranks\n"
      "  --algo NAME|all          force the collective's algorithm (sets "
      "MCL_ALGO);\n"
      "                           all: the tuner's and every algorithm, "
      "size by size;\n"
      "                           the last column shows the one used\n"
      "  --transport NAME         mclConfig_t.transport, e.g. auto or shm "
      "(default\n"
      "                           MCL_TRANSPORT, else auto)\n"
      "  --bind core|none         pin each forked rank to a core, as mpirun "
      "does,\n"
      "                           round-robin when ranks outnumber cores "
      "(Linux;\n"
      "                           default core)\n"
      "  -J, --json FILE          also write every row, the command line, "
      "the MCL_*\n"
      "                           variables, ranks, host and mcl version as "
      "JSON\n"
      "  --qualify                run `qualify` first (exit 1 at the end when "
      "it fails)\n"
      "  --csv FILE               also write every row as CSV (a header line, "
      "then\n"
      "                           one line per row)\n"
      "\n"
      "mcl-perf tune [COLLECTIVE] [-np N] [-b SIZE] [-e SIZE] [-f N] [-d "
      "TYPE]\n"
      "  The tuner's link model and its predicted time of every algorithm "
      "at\n"
      "  every size (default 8 B to 64 MiB, factor 2), marking its pick.\n\n"
      "mcl-perf topo [-np N] [--check] [--dot FILE] [-J FILE]\n"
      "  Shows the cluster: hosts and ranks, every cable with the interface "
      "at both\n"
      "  ends, its speed, the wires per pair, the shape, and the path each "
      "pair of\n"
      "  ranks takes. --check also explains each finding of the cabling "
      "checks with\n"
      "  its fix and exits 1 when one is an error; --dot writes Graphviz; "
      "-J writes\n"
      "  the topology JSON (as MCL_TOPO_DUMP_FILE does).\n"
      "\n"
      "mcl-perf latency [-np N] [--transport LIST] [-b SIZE] [-e SIZE] [-f N] "
      "[-n N]\n"
      "  Round trips between every pair of ranks over each transport that "
      "reaches\n"
      "  the pair, side by side: median and 99th percentile in us, and TCP's "
      "time\n"
      "  over the others'. LIST: some of shm,tcp,rdma (default all three); "
      "8 bytes\n"
      "  and 1000 round trips per pair unless -b/-e and -n say otherwise. "
      "-J and\n"
      "  --csv write the rows.\n"
      "\n"
      "mcl-perf qualify [-np N] [--transport tcp|rdma] [-T SECONDS] [-J "
      "FILE]\n"
      "  Tests every cable alone (each wire of a doubled pair too): round "
      "trips, and\n"
      "  a stream each way against the cable's nominal rate and the other "
      "cables';\n"
      "  OK, SLOW or DEAD. Then each Mac's memory copy and reduction rates. "
      "Exits 1\n"
      "  when any cable or Mac fails. A benchmark's --qualify runs it "
      "first.\n"
      "\n"
      "mcl-perf report [-np N] [--out DIR] [--quick] [-T SECONDS]\n"
      "  The kit to run on every Mac of a cluster and attach to a bug report:\n"
      "  the doctor, qualify over TCP and RDMA, latency TCP against RDMA,\n"
      "  the all-reduce sweep over both, and a killed rank's failure time;\n"
      "  writes one Markdown and one JSON file (mcl-perf report --help).\n"
      "\n"
      "mcl-perf params [-J FILE]\n"
      "  Every MCL_* variable mcl reads: the value in effect, whether it "
      "comes\n"
      "  from the environment or the default, and what it does.\n"
      "\n"
      "SIZE takes a K, M or G suffix (powers of 1024).\n"
      "Without -np: when MCL_UNIQUE_ID (mclUniqueIdToString's form), "
      "MCL_RANK and\n"
      "MCL_WORLD_SIZE are all set, mcl-perf runs as that one rank of a job "
      "started\n"
      "elsewhere; otherwise it forks 2 local ranks.\n"
      "Exit status: 0 success, 1 failure or wrong results, 2 bad usage.\n",
      collectiveNameList(), typeNameList().c_str(), opNameList().c_str());
}

}  // namespace mcl::perf
