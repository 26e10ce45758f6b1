#include "topology/ifconfig.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace mcl::topology {

namespace {

// "flags=8863<UP,BROADCAST,RUNNING> mtu 1500": the words between < and >.
bool hasFlag(std::string_view line, std::string_view flag) {
  size_t open = line.find('<');
  size_t close = line.find('>', open);
  if (open == std::string_view::npos || close == std::string_view::npos)
    return false;
  std::string_view flags = line.substr(open + 1, close - open - 1);
  size_t start = 0;
  while (start <= flags.size()) {
    size_t comma = flags.find(',', start);
    if (comma == std::string_view::npos) comma = flags.size();
    if (flags.substr(start, comma - start) == flag) return true;
    start = comma + 1;
  }
  return false;
}

// "0xfffffffc" -> 30; -1 when the mask is not one run of ones.
int prefixOfHexMask(const std::string& text) {
  char* end = nullptr;
  unsigned long mask = std::strtoul(text.c_str(), &end, 16);
  if (end == text.c_str() || *end != '\0' || mask > 0xffffffffUL) return -1;
  int bits = 0;
  auto m = static_cast<uint32_t>(mask);
  while (bits < 32 && (m & (uint32_t{1} << (31 - bits))) != 0) ++bits;
  if (bits < 32 && (m << bits) != 0) return -1;
  return bits;
}

std::vector<std::string> words(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// "inet 10.77.1.1 netmask 0xfffffffc broadcast ..." and
// "inet6 fe80::1%en2 prefixlen 64 ..."; a point-to-point "a --> b" keeps a.
void addAddress(IfconfigInterface& e, const std::vector<std::string>& w) {
  if (w.size() < 2) return;
  std::string address = w[1];
  address = address.substr(0, address.find('%'));
  int prefix = -1;
  for (size_t i = 2; i + 1 < w.size(); ++i) {
    if (w[0] == "inet" && w[i] == "netmask") prefix = prefixOfHexMask(w[i + 1]);
    if (w[0] == "inet6" && w[i] == "prefixlen")
      prefix = std::atoi(w[i + 1].c_str());
  }
  if (prefix >= 0) e.addresses.push_back({address, prefix});
}

}  // namespace

bool IfconfigInterface::carrier() const {
  return status.empty() ? running : status == "active";
}

std::vector<IfconfigInterface> parseIfconfig(std::string_view text) {
  std::vector<IfconfigInterface> out;
  bool anyText = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    anyText = true;
    if (line.front() != ' ' && line.front() != '\t') {
      size_t colon = line.find(": ");
      if (colon == std::string_view::npos ||
          line.find("flags=", colon) == std::string_view::npos)
        throw error(mclInvalidArgument,
                    "ifconfig: an interface line without flags: \"%.*s\"",
                    static_cast<int>(line.size()), line.data());
      IfconfigInterface e;
      e.name = std::string(line.substr(0, colon));
      e.up = hasFlag(line, "UP");
      e.running = hasFlag(line, "RUNNING");
      std::vector<std::string> w = words(line);
      for (size_t i = 0; i + 1 < w.size(); ++i)
        if (w[i] == "mtu") e.mtu = std::atoi(w[i + 1].c_str());
      out.push_back(e);
      continue;
    }
    if (out.empty()) continue;
    IfconfigInterface& e = out.back();
    // Blank in other ways (\v, \f) than " \t": nothing to read.
    std::vector<std::string> w = words(line);
    if (w.empty()) continue;
    if (w[0] == "inet" || w[0] == "inet6")
      addAddress(e, w);
    else if (w[0] == "status:" && w.size() > 1)
      e.status = w[1];
    else if (w[0] == "member:" && w.size() > 1)
      e.members.push_back(w[1]);
  }
  if (anyText && out.empty())
    throw error(mclInvalidArgument, "ifconfig: no interface in its output");
  return out;
}

}  // namespace mcl::topology
