#include "common/options.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/collective_bench.h"
#include "plan/model_shape.h"

namespace mcl::perf {

namespace {

constexpr double kMaxSize = 1ull << 50;  // 1 PiB: anything larger is a typo

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

// tune: all-reduce unless named, and 8 B to 64 MiB by factors of 2 unless
// sizes are given.
bool finishTune(Options* o, std::string* error) {
  if (!o->sizesGiven) {
    o->minBytes = 8;
    o->maxBytes = size_t{64} << 20;
    if (o->stepFactor == 1) o->stepFactor = 2;
  }
  if (!funcOf(o->collective)) {
    *error = "tune: sendrecv has no algorithms to choose from";
    return false;
  }
  return true;
}

// tp and pp: 100 tokens after 10 untimed unless -n and -w say otherwise.
bool finishDecode(Options* o, std::string* error) {
  if (!o->itersGiven) o->iters = 100;
  if (!o->warmupGiven) o->warmupIters = 10;
  return finishDecodeShape(&o->decode, error);
}

// plan: the model is read now, so a wrong path or field fails before any
// rank starts measuring.
bool finishPlan(Options* o, std::string* error) {
  try {
    plan::loadModel(o->plan.model);
  } catch (const std::exception& e) {
    *error = std::string("plan: ") + e.what();
    return false;
  }
  if (!o->plan.fromPath.empty() && !o->plan.savePath.empty()) {
    *error =
        "plan: --from reads a saved cluster and --save writes a "
        "measured one: give one of them";
    return false;
  }
  return true;
}

}  // namespace

bool finishOptions(Options* o, std::string* error) {
  if ((o->command == Command::Tp || o->command == Command::Pp) &&
      !finishDecode(o, error))
    return false;
  if (o->command == Command::Tune && !finishTune(o, error)) return false;
  if (o->command == Command::Plan && !finishPlan(o, error)) return false;
  if (o->command == Command::Latency && !finishLatency(o, error)) return false;
  if (o->command == Command::Qualify && !o->transport.empty() &&
      o->transport != "tcp" && o->transport != "rdma") {
    *error = "qualify --transport: tcp or rdma (the cables' transport), not '" +
             o->transport + "'";
    return false;
  }
  if (!o->algo.empty() && !funcOf(o->collective)) {
    *error =
        "--algo goes with a collective that has algorithms to choose: "
        "allreduce, allgather, broadcast, reduce, reducescatter, alltoall";
    return false;
  }
  if (o->minBytes > o->maxBytes) {
    *error = "minbytes (" + std::to_string(o->minBytes) +
             ") is larger than maxbytes (" + std::to_string(o->maxBytes) + ")";
    return false;
  }
  if (o->stepFactor <= 1 && o->stepBytes == 0 && o->minBytes < o->maxBytes) {
    *error = "stepbytes is 0 with stepfactor 1: the size would never grow";
    return false;
  }
  return true;
}

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
  if (o.command == Command::Pp && nranks < 2) {
    *error = "pp passes tokens between stages: run at least 2 ranks (-np 2)";
    return false;
  }
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

}  // namespace mcl::perf
