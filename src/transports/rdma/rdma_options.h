// The RDMA transport's settings (MCL_RDMA_*, and MCL_EMU_* for the emulated
// fabric), and its rows of the parameter registry.
#pragma once

#include <string>
#include <vector>

#include "base/param_source.h"
#include "transports/rdma/provider.h"
#include "transports/rdma/rdma_connection.h"
#include "transports/rdma/verbs.h"

namespace mcl::transport::rdma {

struct RdmaOptions {
  ProviderOptions provider;
  FrameShape shape;
  QpType qpType = QpType::UC;        // MCL_RDMA_QP
  bool inlineSends = false;          // MCL_RDMA_INLINE
  std::vector<std::string> devices;  // MCL_RDMA_DEVICES; empty: every one
};

// Throws mclInvalidArgument naming the variable. Under the emu provider it
// reads MCL_EMU_FABRIC's device matrix (loadEmuCabling).
RdmaOptions loadRdmaOptions(const ParamSource& params);

// The device matrix in the JSON file at `path` (a JACCL device matrix),
// checked. Throws mclInvalidArgument naming MCL_EMU_FABRIC, the path and the
// defect.
EmuCabling loadEmuCabling(const std::string& path);

ParamTable rdmaParams();

}  // namespace mcl::transport::rdma
