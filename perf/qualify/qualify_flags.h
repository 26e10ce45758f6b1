// The flags of `mcl-perf qualify`, with its help.
#pragma once

#include <CLI/CLI.hpp>

#include "common/options.h"

namespace mcl::perf {

void addQualifyFlags(CLI::App* command, Options* o);

}  // namespace mcl::perf
