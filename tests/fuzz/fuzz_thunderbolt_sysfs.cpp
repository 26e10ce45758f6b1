// Linux /sys/bus/thunderbolt/devices as the parser sees it: a snapshot of
// file contents (thunderbolt_linux.h). Part of it is set by the remote host
// (its name, its services). The input lists files as
//   @ 0-1/rx_speed
//   40.0 Gb/s
// (a line "@ <path>" starts a file; the lines up to the next one are its
// content). Defects must be mclInvalidArgument; what parses must be within
// the documented bounds and survive the inventory's JSON, which carries it
// to the other ranks.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "topology/inventory.h"
#include "topology/text.h"
#include "topology/thunderbolt_linux.h"

namespace {

namespace topo = mcl::topology;
using mcl::fuzz::acceptedOr;
using mcl::fuzz::check;

topo::SysfsSnapshot snapshotOf(std::string_view text) {
  topo::SysfsSnapshot snapshot;
  std::string* content = nullptr;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    std::string_view withNewline =
        end == std::string_view::npos ? text : text.substr(0, end + 1);
    text.remove_prefix(withNewline.size());
    if (line.substr(0, 2) == "@ ")
      content = &snapshot[std::string(line.substr(2))];
    else if (content != nullptr)
      content->append(withNewline);
  }
  return snapshot;
}

bool serviceSaysNetwork(const topo::SysfsSnapshot& snapshot,
                        const std::string& entry) {
  const std::string prefix = entry + ".";
  for (auto it = snapshot.lower_bound(prefix);
       it != snapshot.end() && it->first.compare(0, prefix.size(), prefix) == 0;
       ++it) {
    const std::string& path = it->first;
    if (path.size() > 4 && path.compare(path.size() - 4, 4, "/key") == 0 &&
        topo::trim(it->second) == "network")
      return true;
  }
  return false;
}

bool speedFits(double gbps) { return std::isfinite(gbps) && gbps >= 0; }
bool lanesFit(int lanes) { return lanes >= 0 && lanes <= 16; }

void checkHosts(const topo::SysfsSnapshot& snapshot,
                const std::vector<topo::XDomainHost>& hosts) {
  for (size_t i = 0; i < hosts.size(); ++i) {
    const topo::XDomainHost& h = hosts[i];
    check(i == 0 || hosts[i - 1].entry < h.entry, "hosts sorted, once each");
    check(!h.entry.empty() && h.entry.find('/') == std::string::npos,
          "an entry is one directory name");
    check(!h.uniqueId.empty() && topo::trim(h.uniqueId) == h.uniqueId,
          "a host has a trimmed unique id");
    check(speedFits(h.rxGbps) && speedFits(h.txGbps),
          "speeds are finite and not negative");
    check(lanesFit(h.rxLanes) && lanesFit(h.txLanes), "lanes within 0..16");
    check(!h.networkService || serviceSaysNetwork(snapshot, h.entry),
          "a network service comes from a 'network' key");
  }
}

// How the hosts reach the other ranks: in the inventory, as JSON dumped as
// comm_topology.cpp dumps it (bad UTF-8 replaced), read back there.
void checkTheyTravel(const std::vector<topo::XDomainHost>& hosts) {
  topo::HostInventory inventory;
  inventory.thunderboltHosts = hosts;
  std::string text = topo::inventoryToJson(inventory).dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  topo::HostInventory back =
      topo::inventoryFromJson(nlohmann::json::parse(text));
  check(back.thunderboltHosts.size() == hosts.size(), "hosts travel");
  for (size_t i = 0; i < hosts.size(); ++i) {
    const topo::XDomainHost& a = hosts[i];
    const topo::XDomainHost& b = back.thunderboltHosts[i];
    check(a.rxGbps == b.rxGbps && a.txGbps == b.txGbps &&
              a.rxLanes == b.rxLanes && a.txLanes == b.txLanes &&
              a.networkService == b.networkService,
          "speeds, lanes and services travel unchanged");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  topo::SysfsSnapshot snapshot =
      snapshotOf({reinterpret_cast<const char*>(data), size});
  std::vector<topo::XDomainHost> hosts;
  if (!acceptedOr(mclInvalidArgument,
                  [&] { hosts = topo::parseThunderboltSysfs(snapshot); }))
    return 0;
  checkHosts(snapshot, hosts);
  checkTheyTravel(hosts);
  return 0;
}
