// `system_profiler SPThunderboltDataType -json` output on arbitrary bytes:
// errors are mcl::Error(mclInvalidArgument); ports that parse can be matched
// into cables without crashing.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/error.h"
#include "topology/cables.h"
#include "topology/thunderbolt_macos.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    mcl::topology::HostThunderbolt host;
    host.ports = mcl::topology::parseSystemProfilerThunderbolt(text);
    // The same Mac twice: every port UUID collides, which must be an error.
    if (!host.ports.empty()) mcl::topology::findCables({host, host});
  } catch (const mcl::Error& e) {
    if (e.code() != mclInvalidArgument) std::abort();
  }
  return 0;
}
