#include "qualify/qualify_plan.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace mcl::perf {

namespace {

constexpr double kDefaultEmulatedGbps = 60;  // MCL_EMU_GBPS's default

std::string envOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v ? v : fallback;
}

bool emulatedFabricAsked() { return envOr("MCL_RDMA_PROVIDER", "") == "emu"; }

bool anyHostHasRdma(const nlohmann::json& topology) {
  for (const auto& host : topology.at("hosts"))
    if (!host.value("inventory", nlohmann::json::object())
             .value("rdma_devices", nlohmann::json::array())
             .empty())
      return true;
  return false;
}

// The device names of one matrix entry: null, "rdma_en2" or a list.
std::vector<std::string> devicesOf(const nlohmann::json& entry) {
  if (entry.is_string()) return {entry.get<std::string>()};
  std::vector<std::string> names;
  if (entry.is_array())
    for (const auto& e : entry)
      if (e.is_string()) names.push_back(e.get<std::string>());
  return names;
}

// The emulated fabric's cables between Macs that have a rank (Mac i is
// rank i, on whatever host).
bool planEmulated(int nranks, QualifyPlan* plan, std::string* error) {
  const std::string path = envOr("MCL_EMU_FABRIC", "");
  std::ifstream in(path);
  if (!in) {
    *error = "MCL_EMU_FABRIC=" + path + ": cannot open the device matrix";
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json matrix =
      nlohmann::json::parse(text.str(), nullptr, false);
  if (!matrix.is_array()) {
    *error = "MCL_EMU_FABRIC=" + path + ": not a JSON device matrix";
    return false;
  }
  const double asked = std::atof(envOr("MCL_EMU_GBPS", "0").c_str());
  const double gbps = asked > 0 ? asked : kDefaultEmulatedGbps;
  const int macs = int(matrix.size());
  for (int i = 0; i < macs; ++i)
    for (int j = i + 1; j < macs; ++j) {
      if (!matrix[size_t(i)].is_array() || !matrix[size_t(j)].is_array() ||
          matrix[size_t(i)].size() <= size_t(j) ||
          matrix[size_t(j)].size() <= size_t(i))
        continue;
      const auto mine = devicesOf(matrix[size_t(i)][size_t(j)]);
      const auto theirs = devicesOf(matrix[size_t(j)][size_t(i)]);
      const size_t wires = std::min(mine.size(), theirs.size());
      if (wires == 0) continue;
      if (j >= nranks) {
        plan->notes.push_back("the cables of Mac " + std::to_string(j) +
                              " (no rank plays it: run " +
                              std::to_string(macs) + " ranks)");
        continue;
      }
      for (size_t k = 0; k < wires; ++k) {
        CableUnderTest c;
        c.kind = "emulated";
        c.nominalGbps = gbps;
        c.wire = int(k);
        c.wires = int(wires);
        c.a = {i, "mac" + std::to_string(i), i, mine[k]};
        c.b = {j, "mac" + std::to_string(j), j, theirs[k]};
        plan->cables.push_back(c);
      }
    }
  return true;
}

// "10.77.1.0/30" for a point-to-point IPv4 address (/30 or /31, as each
// Thunderbolt port gets one), else "".
std::string pointToPointSubnet(const std::string& address, int prefix) {
  in_addr a{};
  if ((prefix != 30 && prefix != 31) ||
      inet_pton(AF_INET, address.c_str(), &a) != 1)
    return "";
  const uint32_t mask = ~uint32_t{0} << (32 - prefix);
  a.s_addr = htonl(ntohl(a.s_addr) & mask);
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a, text, sizeof text);
  return std::string(text) + "/" + std::to_string(prefix);
}

// What a port that carries a cable's address and no detected cable says
// of itself: "switched off", "no link", or "up".
std::string portState(const nlohmann::json& port) {
  if (!port.value("up", true)) return "is switched off";
  if (!port.value("carrier", true)) return "has no link";
  return "is up, with a link";
}

// Ports that carry a cable's address but no cable the detection could
// match: one end of a doubled pair pulled, a dead cable, or a far port
// switched off. Each is a cable the owner expects and does not have; two
// such ports of two hosts in one subnet are the two ends of one cable
// that is down.
void planUnanswered(const nlohmann::json& topology,
                    const std::map<int, std::pair<std::string, int>>& hosts,
                    QualifyPlan* plan) {
  std::set<std::pair<int, std::string>> cabled;
  for (const auto& link : topology.at("links"))
    for (const char* end : {"a", "b"})
      cabled.insert({link.at(end).value("host", -1),
                     link.at(end).value("interface", "")});
  // By subnet, in host order: (host, port, address).
  std::map<std::string,
           std::vector<std::tuple<int, nlohmann::json, std::string>>>
      bySubnet;
  std::vector<std::string> order;
  for (const auto& host : topology.at("hosts")) {
    const int id = host.value("id", 0);
    if (!hosts.count(id)) continue;
    const auto inventory = host.value("inventory", nlohmann::json::object());
    for (const auto& port :
         inventory.value("interfaces", nlohmann::json::array())) {
      const std::string name = port.value("name", "");
      if (port.value("medium", "") == "loopback" || cabled.count({id, name}))
        continue;
      for (const auto& address :
           port.value("addresses", nlohmann::json::array())) {
        const std::string subnet = pointToPointSubnet(
            address.value("address", ""), address.value("prefix", 0));
        if (subnet.empty()) continue;
        if (!bySubnet.count(subnet)) order.push_back(subnet);
        bySubnet[subnet].push_back({id, port, address.value("address", "")});
        break;
      }
    }
  }
  const auto endOf = [&](int id, const nlohmann::json& port) {
    const std::string name = port.value("name", "");
    return CableEnd{id, hosts.at(id).first, hosts.at(id).second,
                    plan->transport == "rdma" ? "rdma_" + name : name};
  };
  for (const std::string& subnet : order) {
    const auto& ends = bySubnet.at(subnet);
    if (ends.size() == 2 && std::get<0>(ends[0]) != std::get<0>(ends[1])) {
      const auto& [id, port, address] = ends[0];
      const auto& [farId, far, farAddress] = ends[1];
      CableUnderTest c;
      c.kind = port.value("medium", "?");
      c.nominalGbps = port.value("speed_gbps", 0.0);
      c.a = endOf(id, port);
      c.b = endOf(farId, far);
      c.deadAtDetection = "the cable is down (subnet " + subnet + "): port " +
                          port.value("name", "") + " (" + address + ") " +
                          portState(port) + ", port " + far.value("name", "") +
                          " (" + farAddress + ") " + portState(far);
      plan->cables.push_back(c);
      continue;
    }
    for (const auto& [id, port, address] : ends) {
      // A port switched off with an address and nothing of the job in its
      // subnet: taken out of use on purpose, not a cable expected.
      if (!port.value("up", true)) continue;
      CableUnderTest c;
      c.kind = port.value("medium", "?");
      c.nominalGbps = port.value("speed_gbps", 0.0);
      c.a = endOf(id, port);
      c.b = {-1, "?", -1, "?"};
      c.deadAtDetection = "port " + port.value("name", "") +
                          " has a cable's address (" + address + ", subnet " +
                          subnet +
                          ") but nothing answers on it: the cable is "
                          "unplugged or dead, or its far port is down";
      plan->cables.push_back(c);
    }
  }
}

// The detected cables between hosts, each driven by its hosts' lowest
// ranks; under RDMA only Thunderbolt ones, through rdma_<interface>.
void planDetected(const nlohmann::json& topology, QualifyPlan* plan) {
  std::map<int, std::pair<std::string, int>> hosts;  // id -> name, rank
  for (const auto& host : topology.at("hosts")) {
    const auto& ranks = host.at("ranks");
    if (ranks.empty()) continue;
    hosts[host.value("id", 0)] = {host.value("name", "?"),
                                  ranks.at(0).get<int>()};
  }
  std::map<std::pair<int, int>, int> wiresPerPair;
  for (const auto& link : topology.at("links")) {
    if (plan->transport == "rdma" && link.value("kind", "") != "thunderbolt")
      continue;
    const int ha = link.at("a").value("host", -1);
    const int hb = link.at("b").value("host", -1);
    if (!hosts.count(ha) || !hosts.count(hb) || ha == hb) continue;
    CableUnderTest c;
    c.kind = link.value("kind", "?");
    c.nominalGbps = link.value("speed_gbps", 0.0);
    const bool swap = ha > hb;
    const auto& lo = link.at(swap ? "b" : "a");
    const auto& hi = link.at(swap ? "a" : "b");
    const std::string prefix = plan->transport == "rdma" ? "rdma_" : "";
    const int hlo = std::min(ha, hb), hhi = std::max(ha, hb);
    c.a = {hlo, hosts[hlo].first, hosts[hlo].second,
           prefix + lo.value("interface", "?")};
    c.b = {hhi, hosts[hhi].first, hosts[hhi].second,
           prefix + hi.value("interface", "?")};
    c.wire = wiresPerPair[{hlo, hhi}]++;
    plan->cables.push_back(c);
  }
  for (CableUnderTest& c : plan->cables)
    c.wires = wiresPerPair[{c.a.host, c.b.host}];
  planUnanswered(topology, hosts, plan);
}

}  // namespace

std::string CableUnderTest::name() const {
  return a.hostName + ":" + a.end + " <-> " +
         (b.rank < 0 ? std::string("?") : b.hostName + ":" + b.end);
}

bool planQualification(const nlohmann::json& topology, int nranks,
                       const std::string& transport, QualifyPlan* plan,
                       std::string* error) {
  plan->transport = transport;
  if (plan->transport.empty())
    plan->transport =
        emulatedFabricAsked() || anyHostHasRdma(topology) ? "rdma" : "tcp";
  plan->emulated = plan->transport == "rdma" && emulatedFabricAsked();
  for (const auto& host : topology.at("hosts")) {
    const auto& ranks = host.at("ranks");
    if (ranks.empty()) continue;
    plan->macs.push_back(
        {host.value("id", 0), host.value("name", "?"), ranks.at(0).get<int>()});
  }
  if (plan->emulated) return planEmulated(nranks, plan, error);
  planDetected(topology, plan);
  return true;
}

}  // namespace mcl::perf
