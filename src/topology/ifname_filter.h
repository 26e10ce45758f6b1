// MCL_SOCKET_IFNAME, with NCCL's syntax: a comma-separated list of interface
// name prefixes ("en,eth"); a leading '^' turns it into a list to exclude
// ("^docker,lo"); a leading '=' (after any '^') makes names match exactly
// ("=en2", "^=en0"). An empty spec matches everything.
#pragma once

#include <string>
#include <vector>

namespace mcl::topology {

struct IfnameFilter {
  bool exclude = false;
  bool exact = false;
  std::vector<std::string> names;

  bool matches(const std::string& interfaceName) const;
  bool empty() const { return names.empty(); }
};

// Throws mclInvalidArgument naming the spec when it lists no name.
IfnameFilter parseIfnameFilter(const std::string& spec);

}  // namespace mcl::topology
