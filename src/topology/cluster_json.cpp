#include "topology/cluster_json.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "base/error.h"
#include "topology/json_input.h"
#include "topology/mlx_files.h"

namespace mcl::topology {

namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

constexpr const char* kTopologyFileKind = "topology file";
constexpr size_t kMaxHosts = 4096;

ojson endToJson(const LinkEnd& e) {
  return {{"host", e.host},
          {"interface", e.interface},
          {"address", e.address},
          {"port", e.receptacle}};
}

ojson hostToJson(const ClusterHost& h) {
  ojson j = {{"id", h.id},
             {"name", h.name},
             {"identity", h.identity},
             {"ranks", h.ranks}};
  if (h.hasInventory) j["inventory"] = inventoryToJson(h.inventory);
  return j;
}

// ---- reading -------------------------------------------------------------

[[noreturn]] void fail(const std::string& path, const std::string& where,
                       const std::string& why) {
  throw error(mclInvalidArgument, "%s %s: %s: %s", kTopologyFileKind,
              path.c_str(), where.c_str(), why.c_str());
}

const json& need(const json& o, const char* key, const std::string& where,
                 const std::string& path) {
  auto it = o.find(key);
  if (it == o.end()) fail(path, where, std::string("no \"") + key + "\"");
  return *it;
}

int intValue(const json& v, const std::string& where, const std::string& path,
             int lo, int hi) {
  if (!v.is_number_integer())
    fail(path, where,
         std::string("should be an integer, not ") + jsonTypeName(v));
  auto x = v.get<int64_t>();
  if (x < lo || x > hi)
    fail(path, where,
         std::to_string(x) + " is out of range [" + std::to_string(lo) + ", " +
             std::to_string(hi) + "]");
  return static_cast<int>(x);
}

std::string optionalString(const json& o, const char* key,
                           const std::string& where, const std::string& path) {
  auto it = o.find(key);
  if (it == o.end()) return "";
  if (!it->is_string())
    fail(path, where + "." + key,
         std::string("should be a string, not ") + jsonTypeName(*it));
  return it->get<std::string>();
}

ClusterHost readHost(const json& h, size_t index, const std::string& path) {
  std::string where = "hosts[" + std::to_string(index) + "]";
  if (!h.is_object())
    fail(path, where,
         std::string("should be an object, not ") + jsonTypeName(h));
  ClusterHost host;
  host.id = intValue(need(h, "id", where, path), where + ".id", path, 0,
                     static_cast<int>(kMaxHosts));
  if (host.id != static_cast<int>(index))
    fail(path, where + ".id",
         "hosts must be listed in id order 0, 1, ... (found " +
             std::to_string(host.id) + ")");
  host.name = optionalString(h, "name", where, path);
  if (host.name.empty()) fail(path, where, "no \"name\" (a non-empty string)");
  host.identity = optionalString(h, "identity", where, path);
  const json& ranks = need(h, "ranks", where, path);
  if (!ranks.is_array())
    fail(path, where + ".ranks",
         std::string("should be a list, not ") + jsonTypeName(ranks));
  for (size_t r = 0; r < ranks.size(); ++r)
    host.ranks.push_back(intValue(ranks[r],
                                  where + ".ranks[" + std::to_string(r) + "]",
                                  path, 0, 1 << 20));
  if (auto inv = h.find("inventory"); inv != h.end()) {
    try {
      host.inventory = inventoryFromJson(*inv);
    } catch (const Error& e) {
      fail(path, where + ".inventory", e.what());
    }
    host.hasInventory = true;
  }
  return host;
}

LinkEnd readEnd(const json& e, const std::string& where, int hosts,
                const std::string& path) {
  if (!e.is_object())
    fail(path, where,
         std::string("should be an object, not ") + jsonTypeName(e));
  LinkEnd end;
  end.host = intValue(need(e, "host", where, path), where + ".host", path, 0,
                      hosts - 1);
  end.interface = optionalString(e, "interface", where, path);
  end.address = optionalString(e, "address", where, path);
  if (auto port = e.find("port"); port != e.end())
    end.receptacle = intValue(*port, where + ".port", path, 0, 64);
  if (end.interface.empty() && end.address.empty() && end.receptacle == 0)
    fail(path, where,
         "needs an \"interface\" (or at least an \"address\" or a "
         "Thunderbolt \"port\")");
  return end;
}

ClusterLink readLink(const json& l, size_t index, int hosts,
                     const std::string& path) {
  std::string where = "links[" + std::to_string(index) + "]";
  if (!l.is_object())
    fail(path, where,
         std::string("should be an object, not ") + jsonTypeName(l));
  ClusterLink link;
  link.a = readEnd(need(l, "a", where, path), where + ".a", hosts, path);
  link.b = readEnd(need(l, "b", where, path), where + ".b", hosts, path);
  if (link.a.host == link.b.host)
    fail(path, where, "both ends are on host " + std::to_string(link.a.host));
  if (link.a.host > link.b.host) std::swap(link.a, link.b);
  link.kind = optionalString(l, "kind", where, path);
  if (link.kind.empty()) link.kind = "unknown";
  static const std::set<std::string> kinds = {"thunderbolt", "ethernet",
                                              "unknown"};
  if (kinds.count(link.kind) == 0)
    fail(path, where + ".kind",
         "\"" + link.kind + "\" is not thunderbolt, ethernet or unknown");
  if (auto speed = l.find("speed_gbps"); speed != l.end()) {
    if (!speed->is_number() || speed->get<double>() < 0)
      fail(path, where + ".speed_gbps", "should be a number >= 0");
    link.speedGbps = speed->get<double>();
  }
  if (auto gen = l.find("generation"); gen != l.end())
    link.generation = intValue(*gen, where + ".generation", path, 0, 9);
  link.subnet = optionalString(l, "subnet", where, path);
  link.matchedBy = "file";
  return link;
}

void checkRanks(const Cluster& c, const std::string& path) {
  std::set<int> seen;
  size_t total = 0;
  for (const ClusterHost& h : c.hosts)
    for (int r : h.ranks) {
      ++total;
      if (!seen.insert(r).second)
        fail(path, "hosts", "rank " + std::to_string(r) + " is listed twice");
    }
  if (!seen.empty() && *seen.rbegin() != static_cast<int>(total) - 1)
    fail(path, "hosts",
         "the ranks should be 0.." + std::to_string(total - 1) +
             " with none missing");
}

Cluster readNative(const json& top, const std::string& path) {
  Cluster c;
  // Named, not a temporary: GCC 14 takes a reference returned beside a
  // temporary argument for one into it (-Wdangling-reference).
  const std::string where = "top level";
  const json& hosts = need(top, "hosts", where, path);
  if (!hosts.is_array() || hosts.empty() || hosts.size() > kMaxHosts)
    fail(path, "hosts", "should be a non-empty list");
  for (size_t i = 0; i < hosts.size(); ++i)
    c.hosts.push_back(readHost(hosts[i], i, path));
  checkRanks(c, path);
  const json& links = need(top, "links", where, path);
  if (!links.is_array())
    fail(path, "links",
         std::string("should be a list, not ") + jsonTypeName(links));
  for (size_t i = 0; i < links.size(); ++i)
    c.links.push_back(
        readLink(links[i], i, static_cast<int>(c.hosts.size()), path));
  if (auto nets = top.find("networks"); nets != top.end() && nets->is_array())
    for (const json& n : *nets) {
      ClusterNetwork net;
      net.subnet = optionalString(n, "subnet", "networks", path);
      net.medium = optionalString(n, "medium", "networks", path);
      if (auto members = n.find("members");
          members != n.end() && members->is_array())
        for (const json& m : *members) {
          LinkEnd e = readEnd(m, "networks.members",
                              static_cast<int>(c.hosts.size()), path);
          if (e.interface.empty() && e.address.empty())
            fail(path, "networks.members",
                 "a member needs an \"interface\" or an \"address\"");
          net.members.push_back({e.host, e.interface, e.address});
        }
      c.networks.push_back(net);
    }
  return c;
}

}  // namespace

ojson clusterToJson(const Cluster& c) {
  ojson hosts = ojson::array();
  for (const ClusterHost& h : c.hosts) hosts.push_back(hostToJson(h));
  ojson links = ojson::array();
  for (const ClusterLink& l : c.links)
    links.push_back({{"a", endToJson(l.a)},
                     {"b", endToJson(l.b)},
                     {"kind", l.kind},
                     {"speed_gbps", l.speedGbps},
                     {"generation", l.generation},
                     {"wire", l.wire},
                     {"subnet", l.subnet},
                     {"matched_by", l.matchedBy}});
  ojson networks = ojson::array();
  for (const ClusterNetwork& n : c.networks) {
    ojson members = ojson::array();
    for (const NetworkMember& m : n.members)
      members.push_back({{"host", m.host},
                         {"interface", m.interface},
                         {"address", m.address}});
    networks.push_back(
        {{"subnet", n.subnet}, {"medium", n.medium}, {"members", members}});
  }
  ojson paths = ojson::array();
  for (const RankPath& p : c.paths) {
    ojson path = {{"ranks", {p.a, p.b}},
                  {"transport", p.transport},
                  {"link_kind", p.linkKind},
                  {"links", p.links}};
    if (!p.note.empty()) path["note"] = p.note;
    if (!p.standby.empty()) path["standby"] = p.standby;
    paths.push_back(path);
  }
  ojson findings = ojson::array();
  for (const Finding& f : c.findings) {
    ojson finding = {{"severity", f.severity},
                     {"what", f.what},
                     {"why", f.why},
                     {"fix", f.fix}};
    if (!f.hosts.empty()) finding["hosts"] = f.hosts;
    if (!f.pairs.empty()) {
      ojson pairs = ojson::array();
      for (const auto& [a, b] : f.pairs) pairs.push_back({a, b});
      finding["pairs"] = pairs;
    }
    findings.push_back(finding);
  }
  return {{"mcl_topology", kTopologyFormatVersion},
          {"source", c.source},
          {"shape", c.shape},
          {"hosts", hosts},
          {"links", links},
          {"networks", networks},
          {"paths", paths},
          {"findings", findings}};
}

Cluster clusterFromText(std::string_view text, const std::string& path) {
  std::string kind = std::string(kTopologyFileKind) + " " + path;
  json top = parseJsonInput(text, kind.c_str());
  Cluster c;
  bool native = top.is_object() &&
                (top.contains("links") ||
                 (top.contains("hosts") && top["hosts"].is_array() &&
                  !top["hosts"].empty() && top["hosts"][0].is_object() &&
                  top["hosts"][0].contains("ranks")));
  if (native) {
    if (auto v = top.find("mcl_topology"); v != top.end()) {
      if (!v->is_number_integer() || v->get<int64_t>() < 1)
        fail(path, "mcl_topology", "should be a format version (1)");
      if (v->get<int64_t>() > kTopologyFormatVersion)
        fail(path, "mcl_topology",
             "format " + std::to_string(v->get<int64_t>()) +
                 " is newer than this mcl reads (" +
                 std::to_string(kTopologyFormatVersion) + "): upgrade mcl");
    }
    c = readNative(top, path);
  } else if (auto mlx = clusterFromMlxJson(top, text, path)) {
    c = std::move(*mlx);
  } else {
    fail(path, "top level",
         "not an mcl topology (an object with \"hosts\" and \"links\"), an "
         "MLX device matrix or an MLX hostfile");
  }
  c.source = "file " + path;
  std::string stated;
  if (top.is_object()) stated = optionalString(top, "shape", "top level", path);
  renumberWires(c);
  c.shape = classifyShape(c);
  if (!stated.empty() && stated != c.shape)
    fail(path, "shape",
         "says \"" + stated + "\" but its links make a \"" + c.shape + "\"");
  return c;
}

}  // namespace mcl::topology
