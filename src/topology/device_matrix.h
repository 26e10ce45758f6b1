// MLX JACCL's device matrix (the file MLX_IBV_DEVICES names): which RDMA
// device each rank uses toward each peer. Accepted so MLX users can bring
// their existing setup.
//
// JSON: an array with one row per rank; row i has one cell per rank j:
// null (itself, or no cable), "rdma_en3" (one cable), or a list of names, one
// per cable, where the k-th cable of a pair is the k-th name on both sides.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mcl::topology {

struct DeviceMatrix {
  int ranks = 0;
  // devices[i][j]: the device names rank i uses toward rank j, one per cable
  // in cable order; empty when there is no cable (and always for i == j).
  std::vector<std::vector<std::vector<std::string>>> devices;

  int cableCount(int i, int j) const {
    return static_cast<int>(devices[i][j].size());
  }
};

// Throws mcl::Error(mclInvalidArgument) naming row and column when the text
// is not JSON, not square, has a non-null diagonal, a cell of the wrong type,
// an empty name, a name used twice in one row (one device is one cable), or
// different cable counts for i->j and j->i.
DeviceMatrix parseDeviceMatrix(std::string_view json);

}  // namespace mcl::topology
