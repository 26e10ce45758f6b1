// The emulated Thunderbolt fabric: which rdma_enX of which Mac is cabled to
// which, read from a JACCL device matrix (row i = Mac i), each cable's
// latency and bandwidth, and the faults asked for (a port that goes down at
// a given time). Pure data; the provider (emu_provider.cpp) moves frames.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mcl::transport::rdma {

struct EmuEnd {
  int mac = -1;
  std::string device;  // "rdma_en2"
};

struct EmuPortFault {
  int mac = -1;
  std::string device;
  int64_t afterMs = 0;  // from the provider's start
};

struct EmuFabric {
  int macs = 0;
  // devices[m]: every device of Mac m that a cable reaches, sorted.
  std::vector<std::vector<std::string>> devices;
  // cables[c] joins ends[c][0] and ends[c][1] (matrix order: i < j, k-th
  // cable of the pair).
  std::vector<std::pair<EmuEnd, EmuEnd>> cables;
  std::vector<EmuPortFault> faults;

  // The end cabled to (mac, device), or mac -1 when the port has no cable.
  EmuEnd peerOf(int mac, const std::string& device) const;
};

// `matrixJson` as MCL_EMU_FABRIC's file holds it; `faults` as MCL_EMU_FAULTS:
// "port_down:MAC:DEVICE@MS[;...]", e.g. "port_down:1:rdma_en2@300". Throws
// mcl::Error(mclInvalidArgument) naming `path` and the defect.
EmuFabric parseEmuFabric(const std::string& matrixJson,
                         const std::string& faults, const std::string& path);

}  // namespace mcl::transport::rdma
