// RDMA options for one Mac of an emulated fabric from tests/fixtures/rdma,
// with no modelled latency: what the unit tests that build RdmaWires in
// one process start from.
#pragma once

#include <string>

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

}  // namespace mcl::transport::rdma
