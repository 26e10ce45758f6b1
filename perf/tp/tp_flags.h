// The flags of `mcl-perf tp`, with its help.
#pragma once

#include <CLI/CLI.hpp>

#include "common/options.h"

namespace mcl::perf {

void addTpFlags(CLI::App* command, Options* o);

}  // namespace mcl::perf
