// What this host's processor looks like (cores, NUMA nodes, caches), from
// hwloc where the build found it, else from the operating system's counts.
// Used to place threads and to size chunks that stay in cache, and shown by
// `mcl-perf topo`.
#pragma once

#include <cstdint>
#include <string>

namespace mcl::topology {

struct MachineInfo {
  int cores = 0;         // physical cores
  int threads = 0;       // hardware threads (processing units)
  int numaNodes = 0;     // 0 when unknown
  int packages = 0;      // 0 when unknown
  uint64_t l2Bytes = 0;  // per core, 0 when unknown
  uint64_t l3Bytes = 0;  // largest last-level cache, 0 when there is none
  uint64_t memoryBytes = 0;
  std::string cpuModel;  // may be empty
  std::string source;    // "hwloc" or "sysconf"
};

// Cached after the first call (hwloc's discovery takes milliseconds).
const MachineInfo& describeMachine();

}  // namespace mcl::topology
