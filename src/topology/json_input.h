// Reading JSON that came from outside (a command's output, a user's file):
// every defect becomes mcl::Error(mclInvalidArgument) naming the kind of
// file and the place, so a user can tell which file to fix and where.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace mcl::topology {

// Parses `text`; `kind` names the file kind in errors ("system_profiler
// JSON", "device matrix").
nlohmann::json parseJsonInput(std::string_view text, const char* kind);

// "null", "number", "string", ... for error messages.
const char* jsonTypeName(const nlohmann::json& value);

// The member `key` of `object` (at `where`) as a string. Missing or of another
// type: an error, unless `required` is false and it is missing (then "").
std::string stringMember(const nlohmann::json& object, const char* key,
                         const std::string& where, const char* kind,
                         bool required);

}  // namespace mcl::topology
