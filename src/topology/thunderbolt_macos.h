// What `system_profiler SPThunderboltDataType -json` says about a Mac's
// Thunderbolt ports and what is plugged into them. Pure parsing: the caller
// runs the command and passes its output, so tests use fixture text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mcl::topology {

// Something found under a port's `_items`, possibly behind hubs or docks.
struct ThunderboltPeer {
  // domain_uuid_key; for another Mac this is the UUID of *its* port, which is
  // what lets two hosts agree on a cable. Empty when the item has none
  // (plain devices such as drives).
  std::string uuid;
  std::string name;    // device_name_key, else _name
  std::string vendor;  // vendor_name_key, may be empty
  // 1 = plugged straight into the port; 2+ = behind that many hubs/docks.
  // Only depth 1 can be a Mac-to-Mac cable.
  int depth = 1;

  bool direct() const { return depth == 1; }
};

// One Thunderbolt bus, i.e. one receptacle (port) of this Mac.
struct ThunderboltPort {
  std::string busName;     // _name, like "thunderboltusb4_bus_1"
  std::string uuid;        // domain_uuid_key: stable across boots
  int receptacle = 0;      // receptacle_id_key; "Thunderbolt N" in networksetup
  std::string speedText;   // current_speed_key as printed
  int speedGbps = 0;       // parsed from speedText; 0 when not stated
  int generation = 0;      // 5 at 80 Gb/s, 4 at 40 Gb/s, else 0
  std::string linkStatus;  // link_status_key, may be empty
  std::string deviceName;  // device_name_key of this Mac ("Mac Studio")
  std::vector<ThunderboltPeer> peers;  // depth-first, parents before children
};

// Throws mcl::Error(mclInvalidArgument) naming the field when the text is
// not JSON, is cut short, or lacks/mistypes a field this needs.
std::vector<ThunderboltPort> parseSystemProfilerThunderbolt(
    std::string_view json);

// "Up to 80 Gb/s" -> 80; 0 when the text names no Gb/s figure.
int parseSpeedGbps(std::string_view text);

}  // namespace mcl::topology
