// The flags of `mcl-perf topo`, with its help.
#pragma once

#include <CLI/CLI.hpp>

#include "common/options.h"

namespace mcl::perf {

void addTopoFlags(CLI::App* command, Options* o);

}  // namespace mcl::perf
