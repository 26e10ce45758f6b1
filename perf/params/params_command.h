// `mcl-perf params`: every tunable mcl reads from the environment, with the
// value in effect, where it comes from (the environment or the default) and
// what it does; -J FILE writes the same as JSON. No communicator is made.
#pragma once

#include "common/options.h"

namespace mcl::perf {

int printParams(const Options& options);

}  // namespace mcl::perf
