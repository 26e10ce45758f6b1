// mcl-perf's command line, parsed with CLI11: one subcommand per
// operation (the seven benchmarks, latency, qualify, topo, tune, params),
// each with its own flags and --help; nccl-tests' program names
// (all_reduce_perf, ...) stand for their benchmark.
#pragma once

#include <string>

#include "common/options.h"

namespace mcl::perf {

enum class ParseStatus {
  Ok,     // *options holds the run
  Done,   // --help or --version was printed
  Error,  // *error names the flag, value or operation
};

// *usageHint: "Run 'mcl-perf latency --help' for usage." for the
// operation named (or mcl-perf's own help).
ParseStatus parseCommandLine(int argc, char** argv, Options* options,
                             std::string* error, std::string* usageHint);

}  // namespace mcl::perf
