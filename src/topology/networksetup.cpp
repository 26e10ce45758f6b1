#include "topology/networksetup.h"

#include <cctype>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "topology/text.h"

namespace mcl::topology {

namespace {

constexpr const char* kNetworksetupKind = "networksetup output";

// The value after "Label:" when `line` starts with it.
std::optional<std::string_view> valueAfter(std::string_view line,
                                           std::string_view label) {
  if (line.substr(0, label.size()) != label) return std::nullopt;
  return trim(line.substr(label.size()));
}

// One "Hardware Port:" block, filled in as its lines arrive.
struct Block {
  std::string port;
  std::string device;
  int line = 0;
};

void finishBlock(const Block& b, HardwarePorts& out) {
  if (b.port == "Thunderbolt Bridge") {
    out.bridgePresent = true;
    out.bridgeDevice = b.device;
    return;
  }
  // "Thunderbolt 1".."Thunderbolt 999" are ports; other names that start
  // with "Thunderbolt" are adapters ("Thunderbolt Ethernet Slot 1").
  std::string_view prefix = "Thunderbolt ";
  bool numbered = b.port.compare(0, prefix.size(), prefix) == 0;
  std::string number = numbered ? b.port.substr(prefix.size()) : "";
  numbered = numbered && !number.empty() && number.size() <= 3;
  for (char c : number)
    numbered = numbered && std::isdigit(static_cast<unsigned char>(c));
  if (!numbered) {
    if (b.device.empty()) return;
    if (b.port == "Wi-Fi" || b.port == "AirPort") {
      out.wifi.insert(b.device);
    } else if (b.port.find("Ethernet") != std::string::npos ||
               b.port.find("LAN") != std::string::npos) {
      out.ethernet.insert(b.device);
    }
    return;
  }
  if (b.device.empty()) {
    throw error(mclInvalidArgument,
                "%s: line %d: port \"%s\" has no \"Device:\" line (output cut "
                "short?)",
                kNetworksetupKind, b.line, b.port.c_str());
  }
  int n = std::stoi(number);
  if (!out.thunderbolt.emplace(n, b.device).second) {
    throw error(mclInvalidArgument, "%s: line %d: \"%s\" appears twice",
                kNetworksetupKind, b.line, b.port.c_str());
  }
}

}  // namespace

HardwarePorts parseNetworksetupPorts(std::string_view text) {
  HardwarePorts out;
  std::optional<Block> block;
  int lineNo = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++lineNo;
    if (auto port = valueAfter(line, "Hardware Port:")) {
      if (block) finishBlock(*block, out);
      block = Block{std::string(*port), "", lineNo};
    } else if (auto device = valueAfter(line, "Device:")) {
      if (!block) {
        throw error(mclInvalidArgument,
                    "%s: line %d: \"Device:\" before any \"Hardware Port:\"",
                    kNetworksetupKind, lineNo);
      }
      if (!block->device.empty()) {
        throw error(mclInvalidArgument,
                    "%s: line %d: second \"Device:\" for port \"%s\"",
                    kNetworksetupKind, lineNo, block->port.c_str());
      }
      block->device = std::string(*device);
    }
  }
  if (block) finishBlock(*block, out);
  return out;
}

}  // namespace mcl::topology
