#include "topology/ifname_filter.h"

#include <cstddef>
#include <string>

#include "base/error.h"

namespace mcl::topology {

bool IfnameFilter::matches(const std::string& interfaceName) const {
  if (names.empty()) return true;
  bool listed = false;
  for (const auto& n : names) {
    if (exact ? interfaceName == n : interfaceName.rfind(n, 0) == 0) {
      listed = true;
      break;
    }
  }
  return exclude ? !listed : listed;
}

IfnameFilter parseIfnameFilter(const std::string& spec) {
  IfnameFilter f;
  size_t pos = 0;
  if (pos < spec.size() && spec[pos] == '^') {
    f.exclude = true;
    ++pos;
  }
  if (pos < spec.size() && spec[pos] == '=') {
    f.exact = true;
    ++pos;
  }
  if (pos == 0 && spec.empty()) return f;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    std::string name = spec.substr(pos, comma - pos);
    while (!name.empty() && name.back() == ' ') name.pop_back();
    while (!name.empty() && name.front() == ' ') name.erase(0, 1);
    if (!name.empty()) f.names.push_back(name);
    pos = comma + 1;
  }
  if (f.names.empty())
    throw error(mclInvalidArgument,
                "MCL_SOCKET_IFNAME='%s' names no interface (expected e.g. "
                "'en', '^docker,lo' or '=en2')",
                spec.c_str());
  return f;
}

}  // namespace mcl::topology
