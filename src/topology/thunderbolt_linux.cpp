#include "topology/thunderbolt_linux.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "base/error.h"
#include "topology/text.h"

namespace mcl::topology {

namespace {

constexpr const char* kSysfsKind = "thunderbolt sysfs";

// Entry name and file name of "0-1/rx_speed"; empty when not of that shape.
std::pair<std::string, std::string> splitPath(const std::string& path) {
  size_t slash = path.find('/');
  if (slash == std::string::npos || slash == 0 ||
      path.find('/', slash + 1) != std::string::npos) {
    return {};
  }
  return {path.substr(0, slash), path.substr(slash + 1)};
}

const std::string* fileOf(const SysfsSnapshot& s, const std::string& entry,
                          const char* file) {
  auto it = s.find(entry + "/" + file);
  return it == s.end() ? nullptr : &it->second;
}

std::string textOf(const SysfsSnapshot& s, const std::string& entry,
                   const char* file) {
  const std::string* content = fileOf(s, entry, file);
  return content ? std::string(trim(*content)) : std::string();
}

// "40.0 Gb/s" or "20 Gb/s" -> Gb/s.
double speedOf(const SysfsSnapshot& s, const std::string& entry,
               const char* file) {
  const std::string* content = fileOf(s, entry, file);
  if (!content) return 0;
  std::string_view text = trim(*content);
  // Digits with an optional fraction, parsed by hand: from_chars for double
  // is missing from older macOS SDKs and strtod follows the locale.
  double value = 0;
  size_t i = 0;
  bool digits = false;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    value = value * 10 + (text[i] - '0');
    digits = true;
  }
  if (digits && i < text.size() && text[i] == '.') {
    double scale = 0.1;
    for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      value += (text[i] - '0') * scale;
      scale /= 10;
    }
  }
  std::string_view unit = trim(text.substr(i));
  // Hundreds of digits add up to infinity, which the inventory's JSON
  // cannot carry to the other ranks.
  if (!digits || unit != "Gb/s" || !std::isfinite(value)) {
    throw error(mclInvalidArgument,
                "%s: %s/%s should read like \"40.0 Gb/s\", not \"%.*s\"",
                kSysfsKind, entry.c_str(), file, static_cast<int>(text.size()),
                text.data());
  }
  return value;
}

int lanesOf(const SysfsSnapshot& s, const std::string& entry,
            const char* file) {
  const std::string* content = fileOf(s, entry, file);
  if (!content) return 0;
  std::string_view text = trim(*content);
  int value = 0;
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 ||
      value > 16) {
    throw error(mclInvalidArgument,
                "%s: %s/%s should be a lane count, not \"%.*s\"", kSysfsKind,
                entry.c_str(), file, static_cast<int>(text.size()),
                text.data());
  }
  return value;
}

}  // namespace

std::vector<XDomainHost> parseThunderboltSysfs(const SysfsSnapshot& snapshot) {
  std::set<std::string> xdomains;
  std::set<std::string> networked;
  for (const auto& [path, content] : snapshot) {
    auto [entry, file] = splitPath(path);
    if (file == "uevent" &&
        content.find("DEVTYPE=thunderbolt_xdomain") != std::string::npos) {
      xdomains.insert(entry);
    }
    // A service is named "<xdomain>.<n>" and has a "key" file.
    size_t dot = entry.rfind('.');
    if (file == "key" && dot != std::string::npos && dot > 0) {
      std::string parent = entry.substr(0, dot);
      xdomains.insert(parent);
      if (trim(content) == "network") networked.insert(parent);
    }
  }
  std::vector<XDomainHost> hosts;
  for (const std::string& entry : xdomains) {
    XDomainHost h;
    h.entry = entry;
    h.deviceName = textOf(snapshot, entry, "device_name");
    h.vendorName = textOf(snapshot, entry, "vendor_name");
    h.uniqueId = textOf(snapshot, entry, "unique_id");
    if (h.uniqueId.empty()) {
      throw error(mclInvalidArgument,
                  "%s: %s/unique_id is missing or empty; the remote host "
                  "cannot be identified",
                  kSysfsKind, entry.c_str());
    }
    h.rxGbps = speedOf(snapshot, entry, "rx_speed");
    h.txGbps = speedOf(snapshot, entry, "tx_speed");
    h.rxLanes = lanesOf(snapshot, entry, "rx_lanes");
    h.txLanes = lanesOf(snapshot, entry, "tx_lanes");
    h.networkService = networked.count(entry) > 0;
    hosts.push_back(std::move(h));
  }
  return hosts;
}

}  // namespace mcl::topology
