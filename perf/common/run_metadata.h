// What every mcl-perf JSON report starts with, whatever it measured: the
// tool, the operation, the command line, the MCL_* variables (secrets
// redacted), mcl's version and the run's start and end; the reports' text
// (nlohmann::ordered_json: keys in the order they are added); and writing a
// report to its file.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/options.h"

namespace mcl::perf {

// MCL_* variables of this process, sorted by name, secrets redacted.
std::vector<std::pair<std::string, std::string>> mclEnvironment();

// "1.2.3" for MCL_VERSION_CODE-style 10203.
std::string versionText(int code);

// Local time as "YYYY-MM-DD HH:MM:SS".
std::string timeNow();

// Adds the members above to report, an object.
void writeRunMetadata(nlohmann::ordered_json& report, const Options& options,
                      std::string_view operation, int libraryVersion,
                      const std::string& startTime);

// report as text: two spaces per level, a newline at the end, NaN and
// infinities as null, invalid UTF-8 as U+FFFD (an argument, a host name or
// a step's output may hold any bytes; nlohmann would throw).
std::string reportText(const nlohmann::ordered_json& report);

// Writes text to path; false with *error naming the path and the cause.
bool writeReportFile(const std::string& path, const std::string& text,
                     std::string* error);

}  // namespace mcl::perf
