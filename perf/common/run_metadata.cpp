#include "common/run_metadata.h"

#include <mcl/mcl.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/redact.h"

extern char** environ;

namespace mcl::perf {

using nlohmann::ordered_json;

std::vector<std::pair<std::string, std::string>> mclEnvironment() {
  std::vector<std::pair<std::string, std::string>> vars;
  for (char** e = environ; e && *e; ++e) {
    std::string entry = *e;
    if (entry.rfind("MCL_", 0) != 0) continue;
    size_t eq = entry.find('=');
    std::string name = entry.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : entry.substr(eq + 1);
    value = shownValue(name, std::move(value));
    vars.emplace_back(std::move(name), std::move(value));
  }
  std::sort(vars.begin(), vars.end());
  return vars;
}

std::string versionText(int code) {
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) +
         "." + std::to_string(code % 100);
}

std::string timeNow() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &local);
  return buf;
}

void writeRunMetadata(ordered_json& report, const Options& options,
                      std::string_view operation, int libraryVersion,
                      const std::string& startTime) {
  report["tool"] = "mcl-perf";
  report["format_version"] = 1;
  report["operation"] = operation;
  report["command_line"] = options.commandLine;
  ordered_json environment = ordered_json::object();
  for (const auto& [name, value] : mclEnvironment()) environment[name] = value;
  report["environment"] = std::move(environment);
  report["mcl_version"] = {{"library", libraryVersion},
                           {"library_text", versionText(libraryVersion)},
                           {"headers", MCL_VERSION_CODE}};
  report["start_time"] = startTime;
  report["end_time"] = timeNow();
}

std::string reportText(const ordered_json& report) {
  return report.dump(2, ' ', false, ordered_json::error_handler_t::replace) +
         "\n";
}

bool writeReportFile(const std::string& path, const std::string& text,
                     std::string* error) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) *error = path + ": write failed";
  return ok;
}

}  // namespace mcl::perf
