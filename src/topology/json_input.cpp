#include "topology/json_input.h"

#include "base/error.h"

namespace mcl::topology {

nlohmann::json parseJsonInput(std::string_view text, const char* kind) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte points at the offending character; truncated files end there.
    throw error(mclInvalidArgument, "%s: not valid JSON at byte %zu of %zu%s",
                kind, static_cast<size_t>(e.byte), text.size(),
                e.byte >= text.size() ? " (the text is cut short)" : "");
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
    throw error(mclInvalidArgument, "%s: %s has no \"%s\"", kind,
                where.c_str(), key);
  }
  if (!it->is_string()) {
    throw error(mclInvalidArgument, "%s: %s.%s should be a string, not %s",
                kind, where.c_str(), key, jsonTypeName(*it));
  }
  return it->get<std::string>();
}

}  // namespace mcl::topology
