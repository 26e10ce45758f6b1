// The flags of the collective benchmarks (allreduce, allgather, broadcast,
// reduce, reducescatter, alltoall, sendrecv): nccl-tests' with their
// meanings and defaults, and mcl's own.
#pragma once

#include <CLI/CLI.hpp>

#include "common/options.h"

namespace mcl::perf {

void addBenchmarkFlags(CLI::App* command, Options* o);

}  // namespace mcl::perf
