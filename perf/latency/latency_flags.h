// The flags of `mcl-perf latency`, with its help.
#pragma once

#include <CLI/CLI.hpp>

#include "common/options.h"

namespace mcl::perf {

void addLatencyFlags(CLI::App* command, Options* o);

}  // namespace mcl::perf
