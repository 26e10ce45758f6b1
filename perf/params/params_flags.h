// The flags of `mcl-perf params`, with its help.
#pragma once

#include <CLI/CLI.hpp>

#include "common/options.h"

namespace mcl::perf {

void addParamsFlags(CLI::App* command, Options* o);

}  // namespace mcl::perf
