// Choosing the verbs provider: MCL_RDMA_PROVIDER=ibverbs (default) loads the
// system library; `emu` builds the emulated Thunderbolt fabric that
// MCL_EMU_FABRIC describes, with this rank as one Mac of it.
#pragma once

#include <memory>
#include <string>

#include "transports/rdma/emu_fabric.h"
#include "transports/rdma/verbs.h"

namespace mcl::transport::rdma {

struct ProviderOptions {
  std::string provider = "ibverbs";  // MCL_RDMA_PROVIDER
  std::string library;               // MCL_RDMA_LIBRARY; "" = the default
  std::string emuFabric;             // MCL_EMU_FABRIC, the file's path
  EmuCabling emuCabling;             // its device matrix (rdma_options.h)
  int emuMac = 0;                    // which Mac of the fabric this rank is
  std::string emuNamespace;          // keeps communicators' wires apart
  double emuLatencyUs = 2.0;         // MCL_EMU_LATENCY_US, one way
  double emuGbps = 60.0;             // MCL_EMU_GBPS, per cable and direction
  std::string emuFaults;             // MCL_EMU_FAULTS
  std::string emuMacos = "26.2";     // MCL_EMU_MACOS: the rules it enforces
  bool emuRc = false;                // MCL_EMU_RC: offer RC queue pairs
};

// Throws mcl::Error naming the provider and what is missing.
std::unique_ptr<Provider> openProvider(const ProviderOptions& options);

}  // namespace mcl::transport::rdma
