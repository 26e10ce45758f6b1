// The flags of `mcl-perf plan`, with its help.
#pragma once

#include <CLI/CLI.hpp>

#include "common/options.h"

namespace mcl::perf {

void addPlanFlags(CLI::App* command, Options* o);

}  // namespace mcl::perf
