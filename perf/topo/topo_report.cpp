#include "topo/topo_report.h"

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>

namespace mcl::perf {

namespace {

using nlohmann::json;

std::string joinInts(const json& list) {
  std::string s;
  for (const json& v : list) s += (s.empty() ? "" : ",") + v.dump();
  return s;
}

std::string speedText(double gbps) {
  if (gbps <= 0) return "?";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g Gb/s", gbps);
  return buf;
}

std::string endText(const json& end) {
  std::string s = end.value("interface", "");
  if (s.empty() && end.value("port", 0) > 0)
    s = "Thunderbolt " + std::to_string(end.value("port", 0));
  if (s.empty()) s = "-";
  return s;
}

std::string hostName(const json& topo, int host) {
  const json& hosts = topo["hosts"];
  if (host < 0 || static_cast<size_t>(host) >= hosts.size()) return "?";
  return hosts[static_cast<size_t>(host)].value("name", "?");
}

std::string bytesText(uint64_t b) {
  char buf[32];
  if (b >= (1u << 20))
    std::snprintf(buf, sizeof(buf), "%llu MiB",
                  static_cast<unsigned long long>(b >> 20));
  else if (b > 0)
    std::snprintf(buf, sizeof(buf), "%llu KiB",
                  static_cast<unsigned long long>(b >> 10));
  else
    std::snprintf(buf, sizeof(buf), "-");
  return buf;
}

void printHosts(const json& topo, std::FILE* out) {
  std::fprintf(out, "#\n# Hosts\n#  %-4s %-20s %-12s %5s %7s %4s %8s  %s\n",
               "id", "name", "ranks", "cores", "threads", "numa", "L3", "rdma");
  for (const json& h : topo["hosts"]) {
    json machine =
        h.contains("inventory") ? h["inventory"]["machine"] : json::object();
    std::string rdma = "?";
    if (h.contains("inventory")) {
      const json& inv = h["inventory"];
      rdma = inv.value("rdma_state", "unknown");
      if (!inv["rdma_devices"].empty())
        rdma += " (" + std::to_string(inv["rdma_devices"].size()) + " devices)";
    }
    std::fprintf(out, "#  %-4d %-20s %-12s %5d %7d %4d %8s  %s\n",
                 h.value("id", 0), h.value("name", "?").c_str(),
                 joinInts(h["ranks"]).c_str(), machine.value("cores", 0),
                 machine.value("threads", 0), machine.value("numa_nodes", 0),
                 bytesText(machine.value("l3_bytes", uint64_t{0})).c_str(),
                 rdma.c_str());
  }
}

// "8 MiB", or "unlimited" for -1 (HostLimits::kUnlimited).
std::string limitText(const json& limits, const char* key, bool bytes) {
  const int64_t v = limits.value(key, int64_t{0});
  if (v < 0) return "unlimited";
  return bytes ? bytesText(static_cast<uint64_t>(v)) : std::to_string(v);
}

// What each host lets a process take: the doctor's figures for the host
// checks below.
void printLimits(const json& topo, std::FILE* out) {
  bool header = false;
  for (const json& h : topo["hosts"]) {
    if (!h.contains("inventory") || !h["inventory"].contains("limits"))
      continue;
    const json& l = h["inventory"]["limits"];
    if (!header) {
      std::fprintf(out,
                   "#\n# Host limits (for one process)\n#  %-4s %-22s %-16s "
                   "%-18s %s\n",
                   "id", "/dev/shm (free)", "ulimit -n (hard)", "ulimit -l",
                   "ranks/cores");
      header = true;
    }
    const std::string shm = l.value("shm_known", false)
                                ? limitText(l, "shm_total_bytes", true) + " (" +
                                      limitText(l, "shm_free_bytes", true) + ")"
                                : "no bound (macOS)";
    const std::string files = limitText(l, "open_files", false) + " (" +
                              limitText(l, "open_files_hard", false) + ")";
    const std::string load =
        std::to_string(h["ranks"].size()) + "/" +
        std::to_string(h["inventory"]["machine"].value("cores", 0));
    std::fprintf(out, "#  %-4d %-22s %-16s %-18s %s\n", h.value("id", 0),
                 shm.c_str(), files.c_str(),
                 limitText(l, "locked_bytes", true).c_str(), load.c_str());
  }
}

// Each Mac's Thunderbolt ports: speed, generation and what is plugged in.
void printPorts(const json& topo, std::FILE* out) {
  bool header = false;
  for (const json& h : topo["hosts"]) {
    if (!h.contains("inventory")) continue;
    for (const json& p : h["inventory"]["thunderbolt_ports"]) {
      if (!header) {
        std::fprintf(out, "#\n# Thunderbolt ports\n");
        header = true;
      }
      std::string peers;
      for (const json& q : p["peers"])
        peers += (peers.empty() ? "" : ", ") + q.value("name", "?") +
                 (q.value("depth", 1) > 1 ? " (behind a hub)" : "");
      std::fprintf(out, "#  host %d port %d: %s, TB%d, %s\n", h.value("id", 0),
                   p.value("receptacle", 0),
                   speedText(p.value("speed_gbps", 0)).c_str(),
                   p.value("generation", 0),
                   peers.empty() ? "nothing plugged in" : peers.c_str());
    }
  }
}

void printCables(const json& topo, std::FILE* out) {
  const json& links = topo["links"];
  std::fprintf(out, "#\n# Cables (%zu)\n", links.size());
  if (links.empty()) return;
  std::fprintf(out, "#  %-14s %-15s     %-14s %-15s %-11s %9s %4s\n",
               "host:interface", "address", "host:interface", "address", "kind",
               "speed", "wire");
  for (const json& l : links) {
    const json& a = l["a"];
    const json& b = l["b"];
    std::string ea = std::to_string(a.value("host", -1)) + ":" + endText(a);
    std::string eb = std::to_string(b.value("host", -1)) + ":" + endText(b);
    std::string kind = l.value("kind", "?");
    if (l.value("generation", 0) > 0)
      kind += " " + std::to_string(l.value("generation", 0));
    std::fprintf(out, "#  %-14s %-15s <-> %-14s %-15s %-11s %9s %4d\n",
                 ea.c_str(), a.value("address", "").c_str(), eb.c_str(),
                 b.value("address", "").c_str(), kind.c_str(),
                 speedText(l.value("speed_gbps", 0.0)).c_str(),
                 l.value("wire", 0));
  }
  // Wires per pair, with the bandwidth they add up to.
  std::map<std::pair<int, int>, std::pair<int, double>> pairs;
  for (const json& l : links) {
    auto& p = pairs[{l["a"].value("host", -1), l["b"].value("host", -1)}];
    ++p.first;
    p.second += l.value("speed_gbps", 0.0);
  }
  std::fprintf(out, "#\n# Wires per pair of hosts\n");
  for (const auto& [pair, p] : pairs)
    std::fprintf(out, "#  %s (%d) <-> %s (%d): %d wire%s, %s\n",
                 hostName(topo, pair.first).c_str(), pair.first,
                 hostName(topo, pair.second).c_str(), pair.second, p.first,
                 p.first == 1 ? "" : "s", speedText(p.second).c_str());
}

void printNetworks(const json& topo, std::FILE* out) {
  const json& nets = topo["networks"];
  if (nets.empty()) return;
  std::fprintf(out, "#\n# Shared networks\n");
  for (const json& n : nets) {
    std::string members;
    for (const json& m : n["members"])
      members += (members.empty() ? "" : ", ") +
                 std::to_string(m.value("host", -1)) + ":" +
                 m.value("interface", "");
    std::fprintf(out, "#  %-18s %-9s %s\n", n.value("subnet", "").c_str(),
                 n.value("medium", "").c_str(), members.c_str());
  }
}

void printPaths(const json& topo, std::FILE* out) {
  const json& paths = topo["paths"];
  if (paths.empty()) return;
  std::fprintf(out, "#\n# Paths between ranks\n");
  for (const json& p : paths) {
    std::string via;
    for (const json& l : p["links"])
      via += (via.empty() ? "" : " + ") + l.get<std::string>();
    std::string transport = p.value("transport", "?");
    std::string kind = p.value("link_kind", "");
    std::string line = transport;
    if (!kind.empty()) line += "  " + kind + ": " + via;
    std::fprintf(out, "#  %3d <-> %-3d %s\n", p["ranks"][0].get<int>(),
                 p["ranks"][1].get<int>(), line.c_str());
    if (p.contains("note"))
      std::fprintf(out, "#             (%s)\n",
                   p["note"].get<std::string>().c_str());
  }
}

std::string dotQuote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '\\';  // backslashes stay: "\n" breaks lines
    q += c;
  }
  return q + "\"";
}

// Breaks a note into lines of about `width` characters at spaces ("\n"
// breaks lines in DOT labels).
std::string wrapped(const std::string& text, size_t width) {
  std::string out;
  size_t column = 0;
  for (char c : text) {
    if (c == ' ' && column >= width) {
      out += "\\n";
      column = 0;
      continue;
    }
    out += c;
    ++column;
  }
  return out;
}

// The worst severity the findings give each pair of hosts: "error",
// "warning", or absent.
std::map<std::pair<int, int>, std::string> troubledPairs(const json& topo) {
  std::map<std::pair<int, int>, std::string> out;
  for (const json& f : topo["findings"]) {
    const std::string severity = f.value("severity", "");
    if (severity != "error" && severity != "warning") continue;
    for (const json& p : f.value("pairs", json::array())) {
      if (!p.is_array() || p.size() != 2) continue;
      std::string& worst = out[{p[0].get<int>(), p[1].get<int>()}];
      if (worst != "error") worst = severity;
    }
  }
  return out;
}

std::string colorOf(const std::string& severity) {
  return severity == "error" ? "red" : "orange";
}

// The problems on the picture: cables of troubled pairs in red (errors)
// or orange (warnings), a dashed edge where a pair has trouble but no
// cable (one never configured, traffic off the cables), and a note per
// finding tied to its hosts.
std::string problemsDot(const json& topo) {
  std::string dot;
  std::map<std::pair<int, int>, std::string> pairs = troubledPairs(topo);
  for (const json& l : topo["links"])
    pairs.erase({l["a"].value("host", -1), l["b"].value("host", -1)});
  for (const auto& [pair, severity] : pairs)
    dot += "  h" + std::to_string(pair.first) + " -- h" +
           std::to_string(pair.second) +
           " [style=dashed, color=" + colorOf(severity) +
           ", penwidth=2, label=\"no working cable\"];\n";
  int n = 0;
  for (const json& f : topo["findings"]) {
    const std::string severity = f.value("severity", "");
    if (severity != "error" && severity != "warning") continue;
    const std::string id = "problem" + std::to_string(n++);
    std::string upper = severity;
    for (char& c : upper) c = static_cast<char>(std::toupper(c));
    dot += "  " + id + " [shape=note, color=" + colorOf(severity) +
           ", fontcolor=" + colorOf(severity) + ", label=" +
           dotQuote(wrapped(upper + ": " + f.value("what", ""), 48)) + "];\n";
    for (const json& h : f.value("hosts", json::array()))
      dot += "  " + id + " -- h" + std::to_string(h.get<int>()) +
             " [style=dotted, color=" + colorOf(severity) + "];\n";
  }
  return dot;
}

}  // namespace

void printTopology(const json& topo, std::FILE* out) {
  size_t ranks = 0;
  for (const json& h : topo["hosts"]) ranks += h["ranks"].size();
  std::fprintf(out, "# mcl-perf topo: %zu host%s, %zu rank%s, shape %s (%s)\n",
               topo["hosts"].size(), topo["hosts"].size() == 1 ? "" : "s",
               ranks, ranks == 1 ? "" : "s", topo.value("shape", "?").c_str(),
               topo.value("source", "?").c_str());
  printHosts(topo, out);
  printLimits(topo, out);
  printPorts(topo, out);
  printCables(topo, out);
  printNetworks(topo, out);
  printPaths(topo, out);
}

int printFindings(const json& topo, bool explain, std::FILE* out) {
  int errors = 0;
  int warnings = 0;
  for (const json& f : topo["findings"]) {
    std::string severity = f.value("severity", "");
    errors += severity == "error";
    warnings += severity == "warning";
  }
  std::fprintf(out, "#\n# Checks: %d error%s, %d warning%s\n", errors,
               errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
  for (const json& f : topo["findings"]) {
    std::string severity = f.value("severity", "");
    for (char& c : severity) c = static_cast<char>(std::toupper(c));
    std::fprintf(out, "#  %-7s %s\n", severity.c_str(),
                 f.value("what", "").c_str());
    if (explain) {
      std::fprintf(out, "#          why: %s\n", f.value("why", "").c_str());
      std::fprintf(out, "#          fix: %s\n", f.value("fix", "").c_str());
    }
  }
  return errors;
}

std::string topologyDot(const json& topo) {
  std::string dot = "graph mcl {\n  label=" +
                    dotQuote("mcl cluster: " + topo.value("shape", "?")) +
                    ";\n  node [shape=box, style=rounded];\n";
  for (const json& h : topo["hosts"])
    dot += "  h" + std::to_string(h.value("id", 0)) + " [label=" +
           dotQuote(h.value("name", "?") + " (host " +
                    std::to_string(h.value("id", 0)) + ")\\nranks " +
                    joinInts(h["ranks"])) +
           "];\n";
  const std::map<std::pair<int, int>, std::string> troubled =
      troubledPairs(topo);
  for (const json& l : topo["links"]) {
    std::string label = endText(l["a"]) + " - " + endText(l["b"]) + "\\n" +
                        l.value("kind", "?") + ", " +
                        speedText(l.value("speed_gbps", 0.0));
    const int a = l["a"].value("host", -1);
    const int b = l["b"].value("host", -1);
    auto trouble = troubled.find({a, b});
    dot += "  h" + std::to_string(a) + " -- h" + std::to_string(b) +
           " [label=" + dotQuote(label) +
           (trouble == troubled.end()
                ? std::string()
                : ", color=" + colorOf(trouble->second) + ", penwidth=2") +
           "];\n";
  }
  int n = 0;
  for (const json& net : topo["networks"]) {
    std::string id = "net" + std::to_string(n++);
    dot += "  " + id + " [shape=ellipse, style=dashed, label=" +
           dotQuote(net.value("subnet", "") + "\\n" + net.value("medium", "")) +
           "];\n";
    for (const json& m : net["members"])
      dot += "  h" + std::to_string(m.value("host", -1)) + " -- " + id +
             " [style=dashed, label=" + dotQuote(m.value("interface", "")) +
             "];\n";
  }
  return dot + problemsDot(topo) + "}\n";
}

}  // namespace mcl::perf
