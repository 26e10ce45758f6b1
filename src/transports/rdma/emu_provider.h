// The emulated Thunderbolt fabric as a verbs provider: each process is one
// Mac of the fabric; a queue pair's inbound wire is a ring in shared memory
// that the peer's queue pair writes frames into. It keeps UC's rules (a
// frame that arrives when no receive is posted is dropped; a send completes
// once it left, whether or not anyone receives it), models each cable's
// latency and bandwidth, and takes ports down as MCL_EMU_FAULTS asks.
//
// It enforces what is known of Apple's provider, refusing the way a
// provider would (mclSystemError with an errno), so a test fails when mcl
// breaks a rule: UC queue pairs only (RC only when the test asks for it:
// no drops, a frame waits for a receive, acknowledgements not modelled);
// path MTU 1024; no inline data; registrations that start on a page
// boundary; on macOS before 26.3, no frame over 4096 bytes; at most 32
// receives posted per queue pair (ENOMEM beyond); and a SEND lands in
// receives 4 KiB Thunderbolt frame by frame, so one that covers fewer or
// more frames than its receive puts data in the wrong place
// (emu_provider.cpp says how). MCL_EMU_FAULTS drops, duplicates or delays
// frames as asked (emu_faults.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "platform/os_version.h"
#include "transports/rdma/emu_fabric.h"
#include "transports/rdma/verbs.h"

namespace mcl::transport::rdma {

struct EmuSettings {
  EmuFabric fabric;
  int mac = 0;             // this process' Mac
  std::string nameSpace;   // short text that keeps communicators apart
  double latencyUs = 2.0;  // one way
  double gbps = 60.0;      // per cable and direction
  platform::OsVersion macos{26, 2, 0};  // the release whose rules it keeps
  bool rc = false;                      // offers RC queue pairs (tests)
};

// The emulated provider's rules, for the tests that check them.
constexpr uint32_t kEmuPathMtu = 1024;
constexpr uint32_t kEmuFrameBytesBefore263 = 4096;
constexpr int kEmuMaxPostedReceives = 32;

std::unique_ptr<Provider> openEmuProvider(EmuSettings settings);

// The fabric of an emulated provider; null for any other provider.
const EmuFabric* emuFabricOf(const Provider& provider);

// Frames the receivers of this process dropped (UC, no receive posted):
// normal runs must show 0.
uint64_t emuFramesDropped();

// Frames this process' senders dropped, duplicated, delayed or failed
// because MCL_EMU_FAULTS asked (indexed by EmuFrameFaultKind).
struct EmuFaultCounts {
  uint64_t dropped = 0;
  uint64_t duplicated = 0;
  uint64_t delayed = 0;
  uint64_t failed = 0;
};
EmuFaultCounts emuFaultCounts();

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
