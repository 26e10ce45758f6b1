// The transports mcl knows, in priority order: the one list core consults.
// Nothing else in core names a concrete transport.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/param_source.h"
#include "transports/device.h"

namespace mcl {

struct TransportEntry {
  const char* name;  // MCL_TRANSPORT's word for it
  // MCL_TRANSPORT=auto tries it.
  bool inAuto = true;
  // Kept whatever MCL_TRANSPORT names, after it: a rank's connection to
  // itself, and the pairs the named transport declines (ranks of one Mac
  // under MCL_TRANSPORT=rdma).
  bool alwaysKept = false;
  std::unique_ptr<transport::Device> (*make)(const transport::DeviceInit&) =
      nullptr;
  ParamTable (*params)() = nullptr;  // its MCL_* variables
  // What the transport asks of a host beyond one communicator, for core's
  // checks and chores (null: nothing). Core learns these only here: no
  // file of core but this folder's names a concrete transport.
  //   hostSharedBytes: the shared memory a host's `localRanks` ranks take
  //     under `params` (the topology's check of the host's room);
  //   abandonedSegment: for init's sweep of /dev/shm, whether segment
  //     `name` is one of this transport's whose owner (*ownerPid) is gone;
  //     segmentHolds says what such a segment held, for the log.
  uint64_t (*hostSharedBytes)(int localRanks,
                              const ParamSource& params) = nullptr;
  bool (*abandonedSegment)(const std::string& name, int* ownerPid) = nullptr;
  const char* segmentHolds = "";
};

// Every transport, in priority order (shared memory, RDMA, TCP, then any
// a test added).
std::vector<TransportEntry> transportRegistry();

// Adds a transport after the others (tests: a transport core has never
// heard of joins through this alone). Throws mclInvalidUsage for a name
// already taken.
void addTransport(const TransportEntry& entry);
void removeTransport(const std::string& name);

// "auto, shm, rdma, tcp": what MCL_TRANSPORT accepts.
std::string transportChoices();

// The transports a communicator tries, in order, under MCL_TRANSPORT =
// `setting`: "auto", every transport tried automatically; a transport's
// name, that one first and then those always kept. Throws
// mclInvalidArgument for an unknown name.
std::vector<TransportEntry> transportsFor(const std::string& setting);

}  // namespace mcl
