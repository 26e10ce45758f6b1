// The flags of `mcl-perf pp`, with its help.
#pragma once

#include <CLI/CLI.hpp>

#include "common/options.h"

namespace mcl::perf {

void addPpFlags(CLI::App* command, Options* o);

}  // namespace mcl::perf
