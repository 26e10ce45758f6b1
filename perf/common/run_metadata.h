// What every mcl-perf JSON report starts with, whatever it measured: the
// tool, the operation, the command line, the MCL_* variables (secrets
// redacted), mcl's version and the run's start and end; and writing a
// report to its file.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/json_writer.h"
#include "common/options.h"

namespace mcl::perf {

// MCL_* variables of this process, sorted by name, secrets redacted.
std::vector<std::pair<std::string, std::string>> mclEnvironment();

// "1.2.3" for MCL_VERSION_CODE-style 10203.
std::string versionText(int code);

// Local time as "YYYY-MM-DD HH:MM:SS".
std::string timeNow();

// Writes the members above into the open object of w.
void writeRunMetadata(JsonWriter& w, const Options& options,
                      std::string_view operation, int libraryVersion,
                      const std::string& startTime);

// Writes text to path; false with *error naming the path and the cause.
bool writeReportFile(const std::string& path, const std::string& text,
                     std::string* error);

}  // namespace mcl::perf
