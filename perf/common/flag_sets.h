// The flags several of mcl-perf's subcommands take, each added to a CLI11
// (sub)command with its help line. A value out of range is refused with the
// flag, the value and what the flag takes (CLI::ValidationError).
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <functional>
#include <string>

#include "common/options.h"

namespace mcl::perf {

// An integer flag within [lo, hi]; `set` receives the value.
CLI::Option* addIntFlag(CLI::App* command, const std::string& names,
                        long long lo, long long hi,
                        std::function<void(int)> set, const std::string& help);

// A size flag (a K, M or G suffix; powers of 1024).
CLI::Option* addSizeFlag(CLI::App* command, const std::string& names,
                         std::function<void(size_t)> set,
                         const std::string& help);

// A flag whose value is any text but empty; `set` receives it and may
// refuse it by throwing CLI::ValidationError.
CLI::Option* addTextFlag(CLI::App* command, const std::string& names,
                         std::function<void(const std::string&)> set,
                         const std::string& help, const std::string& typeName);

// -d/--datatype: one of mcl's types, or (allowAll) "all".
void addDatatypeFlag(CLI::App* command, Options* o, bool allowAll);

// -np, -T/--timeout, --bind and (with transportHelp) --transport: how the
// ranks start and join.
void addRankFlags(CLI::App* command, Options* o, const char* transportHelp);

// -b, -e, -i, -f: the sizes measured; the help shows the defaults given.
void addSizeFlags(CLI::App* command, Options* o, const std::string& minBytes,
                  const std::string& maxBytes);

// -n, -w: timed and untimed iterations, with their defaults for the help.
void addIterationFlags(CLI::App* command, Options* o, const std::string& iters,
                       const std::string& warmup);

// -J/--json/--output_file (the format from the suffix: .csv is CSV, any
// other JSON) and, for commands with rows (csv), --csv.
void addReportFlags(CLI::App* command, Options* o, bool csv);

}  // namespace mcl::perf
