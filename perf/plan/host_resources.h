// What `mcl-perf plan` reads of the machine a rank runs on: its name, its
// memory and what is free of it, and, on a Mac, the chip (whose published
// memory bandwidth is what a GPU decode reaches, not a CPU core's).
#pragma once

#include <string>

namespace mcl::perf::plan {

struct HostResources {
  std::string host;
  double memoryBytes = 0;
  double freeBytes = 0;  // what a new process could take without swapping
  std::string chip;      // "Apple M3 Ultra"; empty where unknown
  int cores = 0;         // physical CPU cores (tells binned chips apart)
};

HostResources readHostResources();

// The published memory bandwidth of an Apple chip named `chip` with
// `cores` CPU cores (bytes per second), or 0 when the chip is not one the
// table knows.
double quotedMemoryBandwidth(const std::string& chip, int cores);

}  // namespace mcl::perf::plan
