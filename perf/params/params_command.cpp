#include "params/params_command.h"

#include <mcl/mcl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/mcl_error.h"
#include "common/redact.h"

namespace mcl::perf {

namespace {

struct Param {
  std::string name;
  std::string value;
  std::string source;  // "env" or "default"
  std::string defaultValue;
  std::string doc;
};

std::vector<Param> registeredParams() {
  std::vector<Param> params;
  for (int i = 0;; ++i) {
    const char* name = nullptr;
    const char* defaultValue = nullptr;
    const char* doc = nullptr;
    if (mclGetParam(i, &name, &defaultValue, &doc) != mclSuccess ||
        name == nullptr)
      break;
    const char* set = std::getenv(name);
    params.push_back({name, shownValue(name, set ? set : defaultValue),
                      set ? "env" : "default", defaultValue, doc});
  }
  return params;
}

// The doc under its row, wrapped at about 76 columns and indented.
void printDoc(const std::string& doc) {
  constexpr size_t kWidth = 72;
  size_t at = 0;
  while (at < doc.size()) {
    size_t end = std::min(doc.size(), at + kWidth);
    if (end < doc.size()) {
      const size_t space = doc.rfind(' ', end);
      if (space != std::string::npos && space > at) end = space;
    }
    std::printf("      %s\n", doc.substr(at, end - at).c_str());
    at = end;
    while (at < doc.size() && doc[at] == ' ') ++at;
  }
}

}  // namespace

int printParams(const Options& options) {
  const std::vector<Param> params = registeredParams();
  if (params.empty()) {
    std::fprintf(stderr,
                 "mcl-perf params: the library lists no parameters: %s\n",
                 mclGetLastError(nullptr));
    return kExitFailure;
  }
  std::printf(
      "# mcl parameters: %zu (value in effect; env: set in the "
      "environment, default: not set)\n",
      params.size());
  std::printf("# %-22s %-24s %s\n", "name", "value", "source");
  for (const Param& p : params) {
    std::printf("  %-22s %-24s %s\n", p.name.c_str(),
                p.value.empty() ? "\"\"" : p.value.c_str(), p.source.c_str());
    printDoc(p.doc);
  }
  if (options.jsonPath.empty()) return kExitOk;
  nlohmann::json rows = nlohmann::json::array();
  for (const Param& p : params)
    rows.push_back({{"name", p.name},
                    {"value", p.value},
                    {"source", p.source},
                    {"default", p.defaultValue},
                    {"doc", p.doc}});
  std::ofstream out(options.jsonPath);
  out << nlohmann::json{{"params", rows}}.dump(1) << "\n";
  if (!out) {
    std::fprintf(stderr, "mcl-perf params: cannot write %s\n",
                 options.jsonPath.c_str());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace mcl::perf
