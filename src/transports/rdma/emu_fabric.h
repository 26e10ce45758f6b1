// The emulated Thunderbolt fabric: which rdma_enX of which Mac is cabled to
// which, given as a JACCL device matrix's cells (row i = Mac i; the RDMA
// options read MCL_EMU_FABRIC's file, rdma_options.h), each cable's latency
// and bandwidth, and the faults asked for (emu_faults.h). Pure data; the
// provider (emu_provider.cpp) moves frames.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "transports/rdma/emu_faults.h"

namespace mcl::transport::rdma {

// cabling[i][j]: the devices Mac i uses toward Mac j, one per cable, in
// cable order (a JACCL device matrix, checked: square, symmetric counts).
using EmuCabling = std::vector<std::vector<std::vector<std::string>>>;

struct EmuEnd {
  int mac = -1;
  std::string device;  // "rdma_en2"
};

struct EmuFabric {
  int macs = 0;
  // devices[m]: every device of Mac m that a cable reaches, sorted.
  std::vector<std::vector<std::string>> devices;
  // cables[c] joins ends[c][0] and ends[c][1] (matrix order: i < j, k-th
  // cable of the pair).
  std::vector<std::pair<EmuEnd, EmuEnd>> cables;
  EmuFaults faults;

  // The end cabled to (mac, device), or mac -1 when the port has no cable.
  EmuEnd peerOf(int mac, const std::string& device) const;
};

// `faults` as MCL_EMU_FAULTS (emu_faults.h), e.g. "port_down:1:rdma_en2@300"
// or "drop:0.0001". Throws mcl::Error(mclInvalidArgument) naming the fault
// and the defect.
EmuFabric buildEmuFabric(const EmuCabling& cabling, const std::string& faults);

}  // namespace mcl::transport::rdma
