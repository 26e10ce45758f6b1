#include "common/flag_sets.h"

#include <CLI/CLI.hpp>

#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/dtype.h"
#include "common/options.h"

namespace mcl::perf {

namespace {

constexpr int kMaxLocalRanks = 1024;

std::optional<long long> parseInt(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return v;
}

// "-n/--iters" from CLI11's "-n,--iters".
std::string shownNames(const std::string& names) {
  std::string shown = names;
  for (char& c : shown)
    if (c == ',') c = '/';
  return shown;
}

bool endsWith(std::string_view text, std::string_view suffix) {
  if (text.size() < suffix.size()) return false;
  text.remove_prefix(text.size() - suffix.size());
  for (size_t i = 0; i < suffix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[i])) != suffix[i])
      return false;
  return true;
}

}  // namespace

CLI::Option* addIntFlag(CLI::App* command, const std::string& names,
                        long long lo, long long hi,
                        std::function<void(int)> set, const std::string& help) {
  const std::string shown = shownNames(names);
  return command
      ->add_option_function<std::string>(
          names,
          [=](const std::string& text) {
            const std::optional<long long> v = parseInt(text);
            if (!v || *v < lo || *v > hi)
              throw CLI::ValidationError("invalid value '" + text + "' for " +
                                         shown + ": expected an integer from " +
                                         std::to_string(lo) + " to " +
                                         std::to_string(hi));
            set(static_cast<int>(*v));
          },
          help)
      ->type_name("N");
}

CLI::Option* addSizeFlag(CLI::App* command, const std::string& names,
                         std::function<void(size_t)> set,
                         const std::string& help) {
  const std::string shown = shownNames(names);
  return command
      ->add_option_function<std::string>(
          names,
          [=](const std::string& text) {
            const std::optional<size_t> v = parseSize(text);
            if (!v)
              throw CLI::ValidationError(
                  "invalid size '" + text + "' for " + shown +
                  ": expected a whole number of bytes with an optional K, M "
                  "or G suffix");
            set(*v);
          },
          help)
      ->type_name("SIZE");
}

CLI::Option* addTextFlag(CLI::App* command, const std::string& names,
                         std::function<void(const std::string&)> set,
                         const std::string& help, const std::string& typeName) {
  const std::string shown = shownNames(names);
  return command
      ->add_option_function<std::string>(
          names,
          [=](const std::string& value) {
            if (value.empty())
              throw CLI::ValidationError("empty value for " + shown);
            set(value);
          },
          help)
      ->type_name(typeName);
}

void addDatatypeFlag(CLI::App* command, Options* o, bool allowAll) {
  const std::string choices = typeNameList() + (allowAll ? " or all" : "");
  addTextFlag(
      command, "-d,--datatype",
      [o, allowAll, choices](const std::string& value) {
        const std::optional<std::vector<mclDataType_t>> types =
            parseTypes(value);
        if (!types || (!allowAll && types->size() != 1))
          throw CLI::ValidationError("unknown data type '" + value +
                                     "' for -d/--datatype: expected one of " +
                                     choices);
        o->types = *types;
        o->datatypeArg = value;
      },
      "element type: " + choices + " (default float)", "TYPE");
}

void addRankFlags(CLI::App* command, Options* o, const char* transportHelp) {
  addIntFlag(
      command, "--np", 1, kMaxLocalRanks, [o](int n) { o->nranks = n; },
      "fork N local ranks (also -np N, as for mpirun); without it, one rank "
      "of a launcher's job, or 2 local ranks");
  if (transportHelp != nullptr)
    addTextFlag(
        command, "--transport",
        [o](const std::string& value) { o->transport = value; }, transportHelp,
        "NAME");
  addIntFlag(
      command, "-T,--timeout", 1, 1 << 30,
      [o](int seconds) { o->timeoutSeconds = seconds; },
      "bound on every wait, in seconds (mclConfig_t.timeoutSeconds; default "
      "MCL_TIMEOUT)")
      ->type_name("SECONDS");
  command
      ->add_option_function<std::string>(
          "--bind",
          [o](const std::string& value) {
            if (value != "core" && value != "none")
              throw CLI::ValidationError("--bind takes core or none, not '" +
                                         value + "'");
            o->bindCores = value == "core";
          },
          "core: pin each forked rank to a core, as mpirun does, round-robin "
          "when ranks outnumber cores (Linux; the default); none")
      ->type_name("core|none");
}

void addSizeFlags(CLI::App* command, Options* o, const std::string& minBytes,
                  const std::string& maxBytes) {
  addSizeFlag(
      command, "-b,--minbytes",
      [o](size_t v) {
        o->minBytes = v;
        o->sizesGiven = true;
      },
      "smallest size (default " + minBytes + ")");
  addSizeFlag(
      command, "-e,--maxbytes",
      [o](size_t v) {
        o->maxBytes = v;
        o->sizesGiven = true;
      },
      "largest size (default " + maxBytes + ")");
  addSizeFlag(
      command, "-i,--stepbytes", [o](size_t v) { o->stepBytes = v; },
      "size increment when the step factor is 1 (default 1M)");
  addIntFlag(
      command, "-f,--stepfactor", 1, 1 << 30,
      [o](int n) { o->stepFactor = static_cast<size_t>(n); },
      "multiply the size by N (default 1: add the step bytes)");
}

void addIterationFlags(CLI::App* command, Options* o, const std::string& iters,
                       const std::string& warmup) {
  addIntFlag(
      command, "-n,--iters", 1, 1 << 30,
      [o](int n) {
        o->iters = n;
        o->itersGiven = true;
      },
      "timed iterations per size (default " + iters + ")");
  addIntFlag(
      command, "-w,--warmup_iters", 0, 1 << 30,
      [o](int n) {
        o->warmupIters = n;
        o->warmupGiven = true;
      },
      "untimed iterations first (default " + warmup + ")");
}

void addReportFlags(CLI::App* command, Options* o, bool csv) {
  addTextFlag(
      command, "-J,--json,--output_file",
      [o, csv](const std::string& path) {
        if (csv && endsWith(path, ".csv"))
          o->csvPath = path;
        else
          o->jsonPath = path;
      },
      csv ? "also write the report to FILE: CSV when its name ends in .csv, "
            "else JSON (every row, the command line, the MCL_* variables, "
            "ranks, host and mcl version)"
          : "also write the report to FILE as JSON",
      "FILE");
  if (!csv) return;
  addTextFlag(
      command, "--csv", [o](const std::string& path) { o->csvPath = path; },
      "also write every row as CSV (a header line, then one line per row)",
      "FILE");
}

}  // namespace mcl::perf
