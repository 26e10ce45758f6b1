#include "transports/rdma/emu_fabric.h"

#include <algorithm>
#include <cstddef>
#include <exception>
#include <set>
#include <string>

#include "base/error.h"

namespace mcl::transport::rdma {

namespace {

EmuPortFault parseFault(const std::string& item, const EmuFabric& fabric) {
  // port_down:MAC:DEVICE@MS
  const std::string kind = "port_down:";
  size_t colon = item.find(':', kind.size());
  size_t at = item.rfind('@');
  if (item.rfind(kind, 0) != 0 || colon == std::string::npos ||
      at == std::string::npos || at < colon)
    throw error(mclInvalidArgument,
                "MCL_EMU_FAULTS: \"%s\" should read port_down:MAC:DEVICE@MS",
                item.c_str());
  EmuPortFault f;
  try {
    f.mac = std::stoi(item.substr(kind.size(), colon - kind.size()));
    f.afterMs = std::stoll(item.substr(at + 1));
  } catch (const std::exception&) {
    throw error(mclInvalidArgument,
                "MCL_EMU_FAULTS: \"%s\": MAC and MS must be numbers",
                item.c_str());
  }
  f.device = item.substr(colon + 1, at - colon - 1);
  if (f.mac < 0 || f.mac >= fabric.macs || f.afterMs < 0)
    throw error(mclInvalidArgument,
                "MCL_EMU_FAULTS: \"%s\": Mac %d is not in the fabric (0..%d)",
                item.c_str(), f.mac, fabric.macs - 1);
  const auto& names = fabric.devices[size_t(f.mac)];
  if (std::find(names.begin(), names.end(), f.device) == names.end())
    throw error(mclInvalidArgument,
                "MCL_EMU_FAULTS: \"%s\": Mac %d has no cabled device %s",
                item.c_str(), f.mac, f.device.c_str());
  return f;
}

}  // namespace

EmuEnd EmuFabric::peerOf(int mac, const std::string& device) const {
  for (const auto& [a, b] : cables) {
    if (a.mac == mac && a.device == device) return b;
    if (b.mac == mac && b.device == device) return a;
  }
  return {};
}

EmuFabric buildEmuFabric(const EmuCabling& cabling, const std::string& faults) {
  EmuFabric fabric;
  const auto macs = cabling.size();
  fabric.macs = int(macs);
  fabric.devices.resize(macs);
  for (size_t i = 0; i < macs; ++i) {
    std::set<std::string> names;
    for (size_t j = 0; j < macs; ++j)
      for (const std::string& d : cabling[i][j]) names.insert(d);
    fabric.devices[i].assign(names.begin(), names.end());
    for (size_t j = i + 1; j < macs; ++j)
      for (size_t k = 0; k < cabling[i][j].size(); ++k)
        fabric.cables.push_back({EmuEnd{int(i), cabling[i][j][k]},
                                 EmuEnd{int(j), cabling[j][i][k]}});
  }
  size_t start = 0;
  while (start < faults.size()) {
    size_t end = faults.find(';', start);
    if (end == std::string::npos) end = faults.size();
    std::string item = faults.substr(start, end - start);
    if (!item.empty()) fabric.faults.push_back(parseFault(item, fabric));
    start = end + 1;
  }
  return fabric;
}

}  // namespace mcl::transport::rdma
