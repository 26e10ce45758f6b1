#include "common/run_metadata.h"

#include <mcl/mcl.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/redact.h"

extern char** environ;

namespace mcl::perf {

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

void writeRunMetadata(JsonWriter& w, const Options& options,
                      std::string_view operation, int libraryVersion,
                      const std::string& startTime) {
  w.key("tool");
  w.string("mcl-perf");
  w.key("format_version");
  w.integer(1);
  w.key("operation");
  w.string(operation);
  w.key("command_line");
  w.beginArray();
  for (const std::string& arg : options.commandLine) w.string(arg);
  w.endArray();
  w.key("environment");
  w.beginObject();
  for (const auto& [name, value] : mclEnvironment()) {
    w.key(name);
    w.string(value);
  }
  w.endObject();
  w.key("mcl_version");
  w.beginObject();
  w.key("library");
  w.integer(libraryVersion);
  w.key("library_text");
  w.string(versionText(libraryVersion));
  w.key("headers");
  w.integer(MCL_VERSION_CODE);
  w.endObject();
  w.key("start_time");
  w.string(startTime);
  w.key("end_time");
  w.string(timeNow());
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
