// `networksetup -listallhardwareports` output on arbitrary bytes.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/error.h"
#include "topology/networksetup.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    mcl::topology::parseNetworksetupPorts(text);
  } catch (const mcl::Error& e) {
    if (e.code() != mclInvalidArgument) std::abort();
  }
  return 0;
}
