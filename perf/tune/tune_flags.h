// The flags of `mcl-perf tune`, with its help.
#pragma once

#include <CLI/CLI.hpp>

#include "common/options.h"

namespace mcl::perf {

void addTuneFlags(CLI::App* command, Options* o);

}  // namespace mcl::perf
