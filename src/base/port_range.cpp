#include "base/port_range.h"

#include <cstdio>
#include <string>

#include "base/error.h"

namespace mcl {

platform::PortRange portRangeSetting(const ParamSource& params) {
  const std::string text = params.text("MCL_PORT_RANGE");
  platform::PortRange range;
  if (text.empty()) return range;
  int first = 0;
  int last = 0;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%d-%d%c", &first, &last, &extra) != 2 ||
      first < 1 || last > 65535 || first > last)
    throw error(mclInvalidArgument,
                "MCL_PORT_RANGE=%s is not a range of ports: give "
                "first-last, within 1-65535 (29500-29599, say)",
                text.c_str());
  range.first = first;
  range.last = last;
  return range;
}

}  // namespace mcl
