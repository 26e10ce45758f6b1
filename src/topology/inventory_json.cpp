// Inventories travel between ranks as JSON: one format for the wire and for
// the dump, readable when debugging, and versioned by its fields.
#include "base/error.h"

#include <cstdint>
#include <string>
#include "topology/inventory.h"
#include "topology/json_input.h"
#include "topology/subnet.h"

namespace mcl::topology {

namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

constexpr const char* kInventoryKind = "host inventory";

const json& member(const json& object, const char* key, json::value_t type) {
  auto it = object.find(key);
  if (it == object.end())
    throw error(mclInvalidArgument, "%s: no \"%s\"", kInventoryKind, key);
  bool ok =
      it->type() == type ||
      (type == json::value_t::number_integer && it->is_number_integer()) ||
      (type == json::value_t::number_float && it->is_number());
  if (!ok)
    throw error(mclInvalidArgument, "%s: \"%s\" is %s", kInventoryKind, key,
                jsonTypeName(*it));
  return *it;
}

std::string str(const json& o, const char* key) {
  return member(o, key, json::value_t::string).get<std::string>();
}
int integer(const json& o, const char* key) {
  return member(o, key, json::value_t::number_integer).get<int>();
}
uint64_t u64(const json& o, const char* key) {
  return member(o, key, json::value_t::number_integer).get<uint64_t>();
}
double number(const json& o, const char* key) {
  return member(o, key, json::value_t::number_float).get<double>();
}
bool boolean(const json& o, const char* key) {
  return member(o, key, json::value_t::boolean).get<bool>();
}
const json& list(const json& o, const char* key) {
  return member(o, key, json::value_t::array);
}

ojson machineToJson(const MachineInfo& m) {
  return {{"cores", m.cores},
          {"threads", m.threads},
          {"numa_nodes", m.numaNodes},
          {"packages", m.packages},
          {"l2_bytes", m.l2Bytes},
          {"l3_bytes", m.l3Bytes},
          {"memory_bytes", m.memoryBytes},
          {"cpu_model", m.cpuModel},
          {"source", m.source}};
}

MachineInfo machineFromJson(const json& j) {
  MachineInfo m;
  m.cores = integer(j, "cores");
  m.threads = integer(j, "threads");
  m.numaNodes = integer(j, "numa_nodes");
  m.packages = integer(j, "packages");
  m.l2Bytes = u64(j, "l2_bytes");
  m.l3Bytes = u64(j, "l3_bytes");
  m.memoryBytes = u64(j, "memory_bytes");
  m.cpuModel = str(j, "cpu_model");
  m.source = str(j, "source");
  return m;
}

ojson limitsToJson(const HostLimits& l) {
  return {{"shm_known", l.shmKnown},
          {"shm_total_bytes", l.shmTotalBytes},
          {"shm_free_bytes", l.shmFreeBytes},
          {"open_files", l.openFiles},
          {"open_files_hard", l.openFilesHard},
          {"locked_bytes", l.lockedBytes}};
}

int64_t i64(const json& o, const char* key) {
  return member(o, key, json::value_t::number_integer).get<int64_t>();
}

HostLimits limitsFromJson(const json& j) {
  HostLimits l;
  l.known = true;
  l.shmKnown = boolean(j, "shm_known");
  l.shmTotalBytes = i64(j, "shm_total_bytes");
  l.shmFreeBytes = i64(j, "shm_free_bytes");
  l.openFiles = i64(j, "open_files");
  l.openFilesHard = i64(j, "open_files_hard");
  l.lockedBytes = i64(j, "locked_bytes");
  return l;
}

ojson portToJson(const ThunderboltPort& p) {
  ojson peers = ojson::array();
  for (const ThunderboltPeer& peer : p.peers)
    peers.push_back({{"uuid", peer.uuid},
                     {"name", peer.name},
                     {"vendor", peer.vendor},
                     {"depth", peer.depth}});
  return {{"bus", p.busName},
          {"uuid", p.uuid},
          {"receptacle", p.receptacle},
          {"speed_text", p.speedText},
          {"speed_gbps", p.speedGbps},
          {"generation", p.generation},
          {"link_status", p.linkStatus},
          {"device_name", p.deviceName},
          {"peers", peers}};
}

ThunderboltPort portFromJson(const json& j) {
  ThunderboltPort p;
  p.busName = str(j, "bus");
  p.uuid = str(j, "uuid");
  p.receptacle = integer(j, "receptacle");
  p.speedText = str(j, "speed_text");
  p.speedGbps = integer(j, "speed_gbps");
  p.generation = integer(j, "generation");
  p.linkStatus = str(j, "link_status");
  p.deviceName = str(j, "device_name");
  for (const json& q : list(j, "peers")) {
    ThunderboltPeer peer;
    peer.uuid = str(q, "uuid");
    peer.name = str(q, "name");
    peer.vendor = str(q, "vendor");
    peer.depth = integer(q, "depth");
    p.peers.push_back(peer);
  }
  return p;
}

}  // namespace

bool InterfaceEntry::hasIpv4() const {
  for (const InterfaceAddress& a : addresses)
    if (a.address.find(':') == std::string::npos) return true;
  return false;
}

bool InterfaceEntry::hasRoutableAddress() const {
  for (const InterfaceAddress& a : addresses)
    if (!isLinkLocal(a.address) && a.address != "127.0.0.1" &&
        a.address != "::1")
      return true;
  return false;
}

const InterfaceEntry* HostInventory::findInterface(
    const std::string& wanted) const {
  for (const InterfaceEntry& e : interfaces)
    if (e.name == wanted) return &e;
  return nullptr;
}

ojson inventoryToJson(const HostInventory& inv) {
  ojson interfaces = ojson::array();
  for (const InterfaceEntry& e : inv.interfaces) {
    ojson addresses = ojson::array();
    for (const InterfaceAddress& a : e.addresses)
      addresses.push_back({{"address", a.address}, {"prefix", a.prefixLength}});
    interfaces.push_back({{"name", e.name},
                          {"medium", e.medium},
                          {"up", e.up},
                          {"speed_gbps", e.speedGbps},
                          {"receptacle", e.receptacle},
                          {"thunderbolt_entry", e.thunderboltEntry},
                          {"addresses", addresses},
                          {"mtu", e.mtu},
                          {"carrier", e.carrier},
                          {"bridge", e.bridge}});
  }
  ojson ports = ojson::array();
  for (const ThunderboltPort& p : inv.thunderboltPorts)
    ports.push_back(portToJson(p));
  ojson xdomains = ojson::array();
  for (const XDomainHost& x : inv.thunderboltHosts)
    xdomains.push_back({{"entry", x.entry},
                        {"device_name", x.deviceName},
                        {"vendor_name", x.vendorName},
                        {"unique_id", x.uniqueId},
                        {"rx_gbps", x.rxGbps},
                        {"tx_gbps", x.txGbps},
                        {"rx_lanes", x.rxLanes},
                        {"tx_lanes", x.txLanes},
                        {"network_service", x.networkService}});
  ojson rdma = ojson::array();
  for (const RdmaDevice& d : inv.rdmaDevices)
    rdma.push_back(
        {{"name", d.name}, {"netdev", d.netdev}, {"active", d.active}});
  return {{"identity", inv.identity},
          {"name", inv.name},
          {"machine", machineToJson(inv.machine)},
          {"limits", limitsToJson(inv.limits)},
          {"interfaces", interfaces},
          {"thunderbolt_detected", inv.thunderboltDetected},
          {"thunderbolt_ports", ports},
          {"thunderbolt_hosts", xdomains},
          {"bridge_active", inv.bridgeActive},
          {"bridge_device", inv.bridgeDevice},
          {"rdma_state", inv.rdmaState},
          {"rdma_devices", rdma},
          {"problems", inv.problems}};
}

HostInventory inventoryFromJson(const json& j) {
  if (!j.is_object())
    throw error(mclInvalidArgument, "%s: expected an object, got %s",
                kInventoryKind, jsonTypeName(j));
  HostInventory inv;
  inv.identity = str(j, "identity");
  inv.name = str(j, "name");
  inv.machine = machineFromJson(member(j, "machine", json::value_t::object));
  if (j.contains("limits"))  // added after format 1's first release
    inv.limits = limitsFromJson(member(j, "limits", json::value_t::object));
  for (const json& e : list(j, "interfaces")) {
    InterfaceEntry entry;
    entry.name = str(e, "name");
    entry.medium = str(e, "medium");
    entry.up = boolean(e, "up");
    entry.speedGbps = number(e, "speed_gbps");
    entry.receptacle = integer(e, "receptacle");
    // Fields added after format 1's first release are optional, so peers
    // and files of an older mcl still read.
    if (e.contains("thunderbolt_entry"))
      entry.thunderboltEntry = str(e, "thunderbolt_entry");
    if (e.contains("mtu")) entry.mtu = integer(e, "mtu");
    if (e.contains("carrier")) entry.carrier = boolean(e, "carrier");
    if (e.contains("bridge")) entry.bridge = str(e, "bridge");
    for (const json& a : list(e, "addresses"))
      entry.addresses.push_back({str(a, "address"), integer(a, "prefix")});
    inv.interfaces.push_back(entry);
  }
  inv.thunderboltDetected = boolean(j, "thunderbolt_detected");
  for (const json& p : list(j, "thunderbolt_ports"))
    inv.thunderboltPorts.push_back(portFromJson(p));
  const json none = json::array();
  for (const json& x :
       j.contains("thunderbolt_hosts") ? list(j, "thunderbolt_hosts") : none) {
    XDomainHost h;
    h.entry = str(x, "entry");
    h.deviceName = str(x, "device_name");
    h.vendorName = str(x, "vendor_name");
    h.uniqueId = str(x, "unique_id");
    h.rxGbps = number(x, "rx_gbps");
    h.txGbps = number(x, "tx_gbps");
    h.rxLanes = integer(x, "rx_lanes");
    h.txLanes = integer(x, "tx_lanes");
    h.networkService = boolean(x, "network_service");
    inv.thunderboltHosts.push_back(h);
  }
  inv.bridgeActive = boolean(j, "bridge_active");
  inv.bridgeDevice = str(j, "bridge_device");
  inv.rdmaState = str(j, "rdma_state");
  for (const json& d : list(j, "rdma_devices"))
    inv.rdmaDevices.push_back(
        {str(d, "name"), str(d, "netdev"), boolean(d, "active")});
  for (const json& p : list(j, "problems")) {
    if (!p.is_string())
      throw error(mclInvalidArgument, "%s: a problem is %s", kInventoryKind,
                  jsonTypeName(p));
    inv.problems.push_back(p.get<std::string>());
  }
  return inv;
}

}  // namespace mcl::topology
