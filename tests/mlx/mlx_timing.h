// The library's cost per call, measured where MLX pays it: MPI_Allreduce
// through the library against mclAllReduce on a communicator of mcl's own
// (REPLAY_DIRECT_ID) over the same transport, on the same buffers,
// alternating round by round so both see the machine in one state; float32
// sums from 8 B to 64 MiB, then mlx-lm's decode step (160 all_sums of 8192
// bfloat16, in place, MLX's user op) both ways. Rank 0 prints the medians.
#pragma once

#include <string>

#include "mlx_loader.h"

namespace mlx_replay {

std::string runTiming(Mpi& mpi, int rank, int size);

}  // namespace mlx_replay
