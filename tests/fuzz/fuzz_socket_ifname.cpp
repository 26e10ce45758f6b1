// MCL_SOCKET_IFNAME ("en,eth", "^docker,lo", "=en2"), parsed by
// parseIfnameFilter (ifname_filter.h). Defects must be mclInvalidArgument;
// what is accepted lists trimmed, non-empty names, each of which the filter
// lets through (or, excluding, stops), and written back in the same syntax
// it reads as the same filter.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "topology/ifname_filter.h"

namespace {

using mcl::topology::IfnameFilter;

// A leading ',' keeps a first name that starts with '^' or '=' a name.
std::string specOf(const IfnameFilter& f) {
  std::string spec = std::string(f.exclude ? "^" : "") + (f.exact ? "=" : "");
  for (const std::string& name : f.names) spec += "," + name;
  return spec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using mcl::fuzz::check;
  std::string spec(reinterpret_cast<const char*>(data), size);
  IfnameFilter f;
  if (!mcl::fuzz::acceptedOr(mclInvalidArgument, [&] {
        f = mcl::topology::parseIfnameFilter(spec);
      }))
    return 0;
  check(spec.empty() == f.empty(), "only the empty spec lists no name");
  for (const std::string& name : f.names) {
    check(!name.empty() && name.front() != ' ' && name.back() != ' ' &&
              name.find(',') == std::string::npos,
          "names are trimmed, non-empty and comma-free");
    check(f.matches(name) == !f.exclude, "a listed name is matched");
  }
  if (f.empty()) return 0;
  IfnameFilter again = mcl::topology::parseIfnameFilter(specOf(f));
  check(again.exclude == f.exclude && again.exact == f.exact &&
            again.names == f.names,
        "the filter written back reads the same");
  return 0;
}
