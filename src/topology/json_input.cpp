#include "topology/json_input.h"

#include <cstddef>
#include <string>
#include <string_view>

#include "base/error.h"

namespace mcl::topology {

nlohmann::json parseJsonInput(std::string_view text, const char* kind) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    if (text.empty()) {
      throw error(mclInvalidArgument, "%s: the text is empty", kind);
    }
    // nlohmann's message reads "[json.exception...] parse error at line L,
    // column C: why"; keep from "line" on, the part a user can act on.
    std::string why = e.what();
    size_t at = why.find("line ");
    if (at != std::string::npos) why = why.substr(at);
    // e.byte is one past the offending character; past the end means the
    // text stopped in the middle of a value, which is what a cut file does.
    const char* hint = e.byte > text.size() ? " (the text is cut short)" : "";
    throw error(mclInvalidArgument, "%s: not valid JSON%s: %s", kind, hint,
                why.c_str());
  } catch (const nlohmann::json::exception& e) {
    // A number too large for any type, and the like.
    std::string why = e.what();
    size_t at = why.find("] ");
    if (at != std::string::npos) why = why.substr(at + 2);
    throw error(mclInvalidArgument, "%s: not usable JSON: %s", kind,
                why.c_str());
  }
}

const char* jsonTypeName(const nlohmann::json& value) {
  return value.type_name();
}

std::string stringMember(const nlohmann::json& object, const char* key,
                         const std::string& where, const char* kind,
                         bool required) {
  auto it = object.find(key);
  if (it == object.end()) {
    if (!required) return "";
    throw error(mclInvalidArgument, "%s: %s has no \"%s\"", kind, where.c_str(),
                key);
  }
  if (!it->is_string()) {
    throw error(mclInvalidArgument, "%s: %s.%s should be a string, not %s",
                kind, where.c_str(), key, jsonTypeName(*it));
  }
  return it->get<std::string>();
}

}  // namespace mcl::topology
