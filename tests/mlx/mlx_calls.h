// What MLX does with the library, rank by rank, each result checked exactly
// against a reference computed here: every all_sum, all_max and all_min MLX
// can send (every dtype, in place and not), all_gather, send and recv, split
// and free, and mlx-lm's shapes (a 70B model's decode rows and a 2048-token
// prefill in bfloat16, a pipeline's send, recv and all_gather).
#pragma once

#include <string>

#include "mlx_loader.h"

namespace mlx_replay {

// Runs everything on a worker thread, as MLX runs its CPU stream; returns
// "" or the first mismatch, naming the call, dtype, count and element.
std::string runCalls(Mpi& mpi, int rank, int size);

}  // namespace mlx_replay
