#include "topology/thunderbolt_macos.h"

#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"
#include "topology/json_input.h"

namespace mcl::topology {

namespace {

constexpr const char* kProfilerKind = "system_profiler JSON";

// Hubs nest a few levels at most; a deeper tree means a corrupt file, and
// the bound keeps a hostile one from exhausting the stack.
constexpr int kMaxDepth = 16;

void collectPeers(const nlohmann::json& items, const std::string& where,
                  int depth, std::vector<ThunderboltPeer>& out) {
  if (!items.is_array()) {
    throw error(mclInvalidArgument, "%s: %s should be a list, not %s",
                kProfilerKind, where.c_str(), jsonTypeName(items));
  }
  if (depth > kMaxDepth) {
    throw error(mclInvalidArgument, "%s: %s nests deeper than %d levels",
                kProfilerKind, where.c_str(), kMaxDepth);
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& item = items[i];
    std::string here = where + "[" + std::to_string(i) + "]";
    if (!item.is_object()) {
      throw error(mclInvalidArgument, "%s: %s should be an object, not %s",
                  kProfilerKind, here.c_str(), jsonTypeName(item));
    }
    ThunderboltPeer peer;
    peer.uuid =
        stringMember(item, "domain_uuid_key", here, kProfilerKind, false);
    peer.name =
        stringMember(item, "device_name_key", here, kProfilerKind, false);
    if (peer.name.empty()) {
      peer.name = stringMember(item, "_name", here, kProfilerKind, false);
    }
    peer.vendor =
        stringMember(item, "vendor_name_key", here, kProfilerKind, false);
    peer.depth = depth;
    out.push_back(std::move(peer));
    if (auto it = item.find("_items"); it != item.end()) {
      collectPeers(*it, here + "._items", depth + 1, out);
    }
  }
}

int parseReceptacle(const std::string& text, const std::string& where) {
  bool digits = !text.empty() && text.size() <= 3;
  for (char c : text)
    digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (!digits) {
    throw error(mclInvalidArgument,
                "%s: %s.receptacle_id_key should be a port number, not \"%s\"",
                kProfilerKind, where.c_str(), text.c_str());
  }
  return std::stoi(text);
}

ThunderboltPort parseBus(const nlohmann::json& bus, const std::string& where) {
  if (!bus.is_object()) {
    throw error(mclInvalidArgument, "%s: %s should be an object, not %s",
                kProfilerKind, where.c_str(), jsonTypeName(bus));
  }
  ThunderboltPort port;
  port.busName = stringMember(bus, "_name", where, kProfilerKind, false);
  port.uuid = stringMember(bus, "domain_uuid_key", where, kProfilerKind, true);
  if (port.uuid.empty()) {
    throw error(mclInvalidArgument, "%s: %s.domain_uuid_key is empty",
                kProfilerKind, where.c_str());
  }
  port.deviceName =
      stringMember(bus, "device_name_key", where, kProfilerKind, false);

  auto tag = bus.find("receptacle_1_tag");
  if (tag == bus.end()) {
    throw error(mclInvalidArgument, "%s: %s has no \"receptacle_1_tag\"",
                kProfilerKind, where.c_str());
  }
  if (!tag->is_object()) {
    throw error(mclInvalidArgument,
                "%s: %s.receptacle_1_tag should be an object, not %s",
                kProfilerKind, where.c_str(), jsonTypeName(*tag));
  }
  std::string tagWhere = where + ".receptacle_1_tag";
  port.receptacle = parseReceptacle(
      stringMember(*tag, "receptacle_id_key", tagWhere, kProfilerKind, true),
      tagWhere);
  port.speedText =
      stringMember(*tag, "current_speed_key", tagWhere, kProfilerKind, false);
  port.speedGbps = parseSpeedGbps(port.speedText);
  port.generation = port.speedGbps == 80 ? 5 : port.speedGbps == 40 ? 4 : 0;
  port.linkStatus =
      stringMember(*tag, "link_status_key", tagWhere, kProfilerKind, false);

  if (auto it = bus.find("_items"); it != bus.end()) {
    collectPeers(*it, where + "._items", 1, port.peers);
  }
  return port;
}

}  // namespace

int parseSpeedGbps(std::string_view text) {
  // The figure is the number right before "Gb/s"; the words around it
  // ("Up to") are not ours to rely on.
  size_t unit = text.find("Gb/s");
  if (unit == std::string_view::npos) return 0;
  size_t end = unit;
  while (end > 0 && text[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(text[begin - 1])))
    --begin;
  if (begin == end || end - begin > 4) return 0;
  return std::stoi(std::string(text.substr(begin, end - begin)));
}

std::vector<ThunderboltPort> parseSystemProfilerThunderbolt(
    std::string_view json) {
  nlohmann::json doc = parseJsonInput(json, kProfilerKind);
  if (!doc.is_object()) {
    throw error(mclInvalidArgument,
                "%s: the top level should be an object, not %s", kProfilerKind,
                jsonTypeName(doc));
  }
  auto buses = doc.find("SPThunderboltDataType");
  if (buses == doc.end()) {
    throw error(mclInvalidArgument, "%s: no \"SPThunderboltDataType\" key",
                kProfilerKind);
  }
  if (!buses->is_array()) {
    throw error(mclInvalidArgument,
                "%s: SPThunderboltDataType should be a list, not %s",
                kProfilerKind, jsonTypeName(*buses));
  }
  std::vector<ThunderboltPort> ports;
  for (size_t i = 0; i < buses->size(); ++i) {
    ports.push_back(parseBus(
        (*buses)[i], "SPThunderboltDataType[" + std::to_string(i) + "]"));
  }
  // Two buses claiming one receptacle or one UUID would make cable matching
  // and the port -> enX mapping ambiguous.
  for (size_t i = 0; i < ports.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (ports[i].uuid == ports[j].uuid) {
        throw error(mclInvalidArgument,
                    "%s: SPThunderboltDataType[%zu] and [%zu] have the same "
                    "domain_uuid_key %s",
                    kProfilerKind, j, i, ports[i].uuid.c_str());
      }
      if (ports[i].receptacle == ports[j].receptacle) {
        throw error(mclInvalidArgument,
                    "%s: SPThunderboltDataType[%zu] and [%zu] are both "
                    "receptacle %d",
                    kProfilerKind, j, i, ports[i].receptacle);
      }
    }
  }
  return ports;
}

}  // namespace mcl::topology
