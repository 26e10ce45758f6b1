#include "transports/rdma/emu_fabric.h"

#include <cstddef>
#include <set>
#include <string>

namespace mcl::transport::rdma {

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
  fabric.faults = parseEmuFaults(faults, fabric.devices);
  return fabric;
}

}  // namespace mcl::transport::rdma
