// RDMA options for one Mac of an emulated fabric from tests/fixtures/rdma,
// with no modelled latency: what the unit tests that build RdmaWires in
// one process start from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "build_paths.h"
#include "transports/rdma/rdma_options.h"
#include "transports/rdma/rdma_wires.h"

namespace mcl::transport::rdma {

inline RdmaOptions emuOptions(const std::string& fabric, int mac,
                              const std::string& nameSpace) {
  RdmaOptions o;
  o.provider.provider = "emu";
  o.provider.emuFabric =
      mcl::testing::fixtureDir() + "/rdma/" + fabric + ".json";
  o.provider.emuCabling = loadEmuCabling(o.provider.emuFabric);
  o.provider.emuMac = mac;
  o.provider.emuNamespace = nameSpace;
  o.provider.emuLatencyUs = 0;
  return o;
}

// Makes the wires between Macs 0 and 1 of the fabric and connects them, as
// init does between two ranks (the addresses exchanged in place of the
// bootstrap).
inline void connectTwoMacs(RdmaWires& mac0, RdmaWires& mac1) {
  mac0.createWires(mac0.emulatedPlan({1}, {0, 1}));
  mac1.createWires(mac1.emulatedPlan({0}, {0, 1}));
  const std::vector<std::vector<uint8_t>> all = {mac0.addresses(),
                                                 mac1.addresses()};
  mac0.connectWires(all);
  mac1.connectWires(all);
}

}  // namespace mcl::transport::rdma
