// What mcl-perf shows of an MCL_* variable's value: the secret and the
// unique id (which carries it) never reach a table, a log or a JSON file.
#pragma once

#include <string>
#include <string_view>

namespace mcl::perf {

inline std::string shownValue(std::string_view name, std::string value) {
  if (name == "MCL_UNIQUE_ID" || name == "MCL_SECRET")
    return value.empty() ? value : "(redacted)";
  return value;
}

}  // namespace mcl::perf
