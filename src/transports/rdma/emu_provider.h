// The emulated Thunderbolt fabric as a verbs provider: each process is one
// Mac of the fabric; a queue pair's inbound wire is a ring in shared memory
// that the peer's queue pair writes frames into. It keeps UC's rules (a
// frame that arrives when no receive is posted is dropped; a send completes
// once it left, whether or not anyone receives it), offers RC (no drops: a
// frame waits for a receive; acknowledgements are not modelled),
// models each cable's latency and bandwidth, and takes ports down as
// MCL_EMU_FAULTS asks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "transports/rdma/emu_fabric.h"
#include "transports/rdma/verbs.h"

namespace mcl::transport::rdma {

struct EmuSettings {
  EmuFabric fabric;
  int mac = 0;             // this process' Mac
  std::string nameSpace;   // short text that keeps communicators apart
  double latencyUs = 2.0;  // one way
  double gbps = 60.0;      // per cable and direction
};

std::unique_ptr<Provider> openEmuProvider(EmuSettings settings);

// The fabric of an emulated provider; null for any other provider.
const EmuFabric* emuFabricOf(const Provider& provider);

// Frames the receivers of this process dropped (UC, no receive posted):
// normal runs must show 0.
uint64_t emuFramesDropped();

// The emulated verbs objects alive in this process: after every
// communicator is destroyed, all zero.
struct EmuLiveObjects {
  int64_t contexts = 0;  // devices opened, each with its protection domain
  int64_t queuePairs = 0;
  int64_t completionQueues = 0;
  int64_t memoryRegions = 0;
};
EmuLiveObjects emuLiveObjects();

}  // namespace mcl::transport::rdma
