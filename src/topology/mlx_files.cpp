#include "topology/mlx_files.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"
#include "topology/device_matrix.h"
#include "topology/json_input.h"

namespace mcl::topology {

namespace {

using nlohmann::json;

// "rdma_en3" sits on interface "en3".
std::string interfaceOfDevice(const std::string& device, int i, int j) {
  const std::string prefix = "rdma_";
  if (device.rfind(prefix, 0) != 0) return device;
  if (device.size() == prefix.size())
    throw error(mclInvalidArgument,
                "row %d, column %d: device \"%s\" names no interface", i, j,
                device.c_str());
  return device.substr(prefix.size());
}

std::vector<ClusterHost> oneRankPerHost(const std::vector<std::string>& names) {
  std::vector<ClusterHost> hosts;
  for (size_t i = 0; i < names.size(); ++i) {
    ClusterHost h;
    h.id = static_cast<int>(i);
    h.name = names[i];
    h.ranks = {static_cast<int>(i)};
    hosts.push_back(h);
  }
  return hosts;
}

void addMatrixLinks(const DeviceMatrix& m, Cluster& c) {
  for (int i = 0; i < m.ranks; ++i)
    for (int j = i + 1; j < m.ranks; ++j)
      for (int k = 0; k < m.cableCount(i, j); ++k) {
        ClusterLink l;
        l.a = {
            i,
            interfaceOfDevice(m.devices[size_t(i)][size_t(j)][size_t(k)], i, j),
            "", 0};
        l.b = {
            j,
            interfaceOfDevice(m.devices[size_t(j)][size_t(i)][size_t(k)], j, i),
            "", 0};
        // RDMA devices exist only on Thunderbolt ports.
        l.kind = "thunderbolt";
        l.matchedBy = "file";
        c.links.push_back(l);
      }
}

bool looksLikeDeviceMatrix(const json& top) {
  if (!top.is_array() || top.empty()) return false;
  for (size_t i = 0; i < top.size(); ++i)
    if (!top[i].is_array() || top[i].size() != top.size() ||
        !top[i][i].is_null())
      return false;
  return true;
}

[[noreturn]] void failRing(const std::string& path, size_t rank, size_t k,
                           const std::string& why) {
  throw error(mclInvalidArgument,
              "MLX ring hostfile %s: rank %zu, entry %zu: %s", path.c_str(),
              rank, k, why.c_str());
}

bool looksLikeRingHostfile(const json& top) {
  if (!top.is_array() || top.empty()) return false;
  for (const json& row : top) {
    if (!row.is_array() || row.empty()) return false;
    for (const json& a : row)
      if (!a.is_string() || a.get<std::string>().find(':') == std::string::npos)
        return false;
  }
  return true;
}

// "10.0.0.1:5000" -> "10.0.0.1"; "[fd00::1]:5000" -> "fd00::1".
std::string hostPart(const std::string& endpoint) {
  if (!endpoint.empty() && endpoint.front() == '[') {
    size_t close = endpoint.find(']');
    return endpoint.substr(
        1, close == std::string::npos ? std::string::npos : close - 1);
  }
  return endpoint.substr(0, endpoint.rfind(':'));
}

// Every entry must read "host:port" with a host and a port number.
void checkRingEntries(const json& top, const std::string& path) {
  for (size_t i = 0; i < top.size(); ++i)
    for (size_t k = 0; k < top[i].size(); ++k) {
      std::string entry = top[i][k].get<std::string>();
      std::string port = entry.substr(entry.rfind(':') + 1);
      if (hostPart(entry).empty())
        failRing(path, i, k, "\"" + entry + "\" has no host before the port");
      bool digits = !port.empty() && port.size() <= 5;
      for (char c : port) digits = digits && c >= '0' && c <= '9';
      if (!digits || std::stoi(port) > 65535)
        failRing(path, i, k, "\"" + entry + "\" has no port number after ':'");
    }
}

// Neighbours in the ring talk over as many connections as both list.
Cluster fromRingHostfile(const json& top, const std::string& path) {
  checkRingEntries(top, path);
  std::vector<std::string> names;
  for (const json& row : top)
    names.push_back(hostPart(row[0].get<std::string>()));
  Cluster c;
  c.hosts = oneRankPerHost(names);
  size_t n = top.size();
  for (size_t i = 0; i < n && n > 1; ++i) {
    size_t j = (i + 1) % n;
    if (n == 2 && i == 1) break;  // two hosts: one neighbour pair
    size_t wires = std::min(top[i].size(), top[j].size());
    for (size_t k = 0; k < wires; ++k) {
      ClusterLink l;
      l.a = {static_cast<int>(i), "", hostPart(top[i][k].get<std::string>()),
             0};
      l.b = {static_cast<int>(j), "", hostPart(top[j][k].get<std::string>()),
             0};
      if (l.a.host > l.b.host) std::swap(l.a, l.b);
      l.kind = "unknown";
      l.matchedBy = "file";
      c.links.push_back(l);
    }
  }
  return c;
}

Cluster fromLauncherHostfile(const json& hosts, const std::string& path) {
  std::vector<std::string> names;
  json matrix = json::array();
  bool anyRdma = false;
  for (size_t i = 0; i < hosts.size(); ++i) {
    const json& h = hosts[i];
    std::string where = "hosts[" + std::to_string(i) + "]";
    std::string name = stringMember(h, "ssh", where, path.c_str(), true);
    names.push_back(name.empty() ? "host " + std::to_string(i) : name);
    auto rdma = h.find("rdma");
    if (rdma != h.end() && !rdma->is_null()) {
      anyRdma = true;
      matrix.push_back(*rdma);
    } else {
      matrix.push_back(json::array());
    }
  }
  Cluster c;
  c.hosts = oneRankPerHost(names);
  if (anyRdma) addMatrixLinks(parseDeviceMatrix(matrix.dump()), c);
  return c;
}

}  // namespace

std::optional<Cluster> clusterFromMlxJson(const json& top,
                                          std::string_view text,
                                          const std::string& path) {
  if (looksLikeDeviceMatrix(top)) {
    DeviceMatrix m;
    try {
      m = parseDeviceMatrix(text);
    } catch (const Error& e) {
      throw error(mclInvalidArgument, "%s: %s", path.c_str(), e.what());
    }
    std::vector<std::string> names;
    for (int i = 0; i < m.ranks; ++i)
      names.push_back("host " + std::to_string(i));
    Cluster c;
    c.hosts = oneRankPerHost(names);
    try {
      addMatrixLinks(m, c);
    } catch (const Error& e) {
      throw error(mclInvalidArgument, "device matrix %s: %s", path.c_str(),
                  e.what());
    }
    return c;
  }
  if (looksLikeRingHostfile(top)) return fromRingHostfile(top, path);
  const json* hosts = nullptr;
  if (top.is_array() && !top.empty() && top[0].is_object() &&
      top[0].contains("ssh"))
    hosts = &top;
  else if (top.is_object() && top.contains("hosts") && top["hosts"].is_array())
    hosts = &top["hosts"];
  if (hosts == nullptr || hosts->empty()) return std::nullopt;
  for (const json& h : *hosts)
    if (!h.is_object())
      throw error(mclInvalidArgument,
                  "MLX hostfile %s: every host should be an object, not %s",
                  path.c_str(), jsonTypeName(h));
  try {
    return fromLauncherHostfile(*hosts, path);
  } catch (const Error& e) {
    throw error(mclInvalidArgument, "MLX hostfile %s: %s", path.c_str(),
                e.what());
  }
}

}  // namespace mcl::topology
