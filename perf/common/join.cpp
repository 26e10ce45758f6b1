#include "common/join.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/mcl_error.h"

namespace mcl::perf {

mclConfig_t configFor(const Options& options) {
  mclConfig_t config = MCL_CONFIG_INITIALIZER;
  config.commName = "mcl-perf";
  config.blocking = 1;  // the benchmark waits for init (MCL_COMM_BLOCKING=0)
  if (!options.transport.empty()) config.transport = options.transport.c_str();
  if (options.timeoutSeconds > 0)
    config.timeoutSeconds = options.timeoutSeconds;
  return config;
}

mclComm_t joinCommunicator(const Options& options, RankSetup* setup) {
  mclConfig_t config = configFor(options);
  mclComm_t comm = nullptr;
  if (setup->fromEnvironment) {
    checkMcl(-1, "mclCommInitFromEnv", mclCommInitFromEnv(&comm, &config),
             nullptr);
    checkMcl(setup->rank, "mclCommUserRank",
             mclCommUserRank(comm, &setup->rank), comm);
    checkMcl(setup->rank, "mclCommCount", mclCommCount(comm, &setup->nranks),
             comm);
  } else {
    checkMcl(setup->rank, "mclCommInitRankConfig",
             mclCommInitRankConfig(&comm, setup->nranks, setup->id, setup->rank,
                                   &config),
             nullptr);
  }
  return comm;
}

namespace {

// The topology's JSON, or the error of the last try. Its counters move
// while the communicator works (RDMA's keeper, TCP's bytes), so it may need
// more than the size just asked: a little room over it, and again with the
// new size if even that was short.
mclResult_t readTopology(mclComm_t comm, std::string* text) {
  constexpr size_t kRoom = 256;
  size_t size = 0;
  mclResult_t r = mclCommGetTopology(comm, nullptr, &size);
  for (int tries = 0; r == mclSuccess && tries < 5; ++tries) {
    text->assign(size + kRoom, '\0');
    size_t have = text->size();
    r = mclCommGetTopology(comm, text->data(), &have);
    if (r == mclSuccess) {
      text->resize(have > 0 ? have - 1 : 0);  // the terminating NUL
      return r;
    }
    if (r != mclInvalidArgument || have <= size + kRoom) return r;
    size = have;  // grew past the room: once more
  }
  return r;
}

}  // namespace

std::string topologyJson(mclComm_t comm, int rank) {
  std::string text;
  checkMcl(rank, "mclCommGetTopology", readTopology(comm, &text), comm);
  return text;
}

std::string transportName(const Options& o) {
  if (!o.transport.empty()) return o.transport;
  const char* env = std::getenv("MCL_TRANSPORT");
  return env && *env ? env : "auto";
}

std::string transportsOfRank(mclComm_t comm, int rank,
                             const std::string& fallback) {
  std::string text;
  if (readTopology(comm, &text) != mclSuccess) return fallback;
  const nlohmann::json topo = nlohmann::json::parse(text.c_str(), nullptr,
                                                    /*allow_exceptions=*/false);
  if (!topo.is_object() || !topo.contains("paths")) return fallback;
  std::map<std::string, std::string> peersBy;  // label -> "1,3"
  std::vector<std::string> order;
  for (const auto& p : topo["paths"]) {
    const int a = p["ranks"][0].get<int>();
    const int b = p["ranks"][1].get<int>();
    if (a != rank && b != rank) continue;
    std::string label = p.value("transport", "?");
    if (p.value("link_kind", "") == "emulated") label += " (emulated)";
    std::string& peers = peersBy[label];
    if (peers.empty()) order.push_back(label);
    peers += (peers.empty() ? "" : ",") + std::to_string(a == rank ? b : a);
  }
  if (order.empty()) return fallback;
  if (order.size() == 1) return order.front();
  std::string out;
  for (const std::string& label : order)
    out += (out.empty() ? "" : "; ") + label + " to " + peersBy[label];
  return out;
}

std::vector<nlohmann::json> topologyParts(const std::vector<mclComm_t>& comms,
                                          int rank, const char* key) {
  std::vector<nlohmann::json> out;
  std::vector<mclComm_t> seen;
  for (mclComm_t comm : comms) {
    if (comm == nullptr ||
        std::find(seen.begin(), seen.end(), comm) != seen.end())
      continue;
    seen.push_back(comm);
    const nlohmann::json top = nlohmann::json::parse(topologyJson(comm, rank));
    out.push_back(top.value(key, nlohmann::json::object()));
  }
  return out;
}

}  // namespace mcl::perf
