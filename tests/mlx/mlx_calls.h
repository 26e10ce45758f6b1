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

// mlx-lm's traffic back to back for `rounds` rounds, as a long
// tensor-parallel run sends it, every result checked exactly: per round
// 16 decode rows (all_sum of 16 KiB of bfloat16), an all_gather of a row,
// and four send/recv of different shapes around the ring in sequence;
// every eighth round a 2048-token prefill all_sum (32 MiB). Returns "" or
// the first mismatch; *calls counts the calls made.
std::string runSoak(Mpi& mpi, int rank, int size, int rounds, long* calls);

}  // namespace mlx_replay
