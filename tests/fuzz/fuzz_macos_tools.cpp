// What a Mac's tools print, on arbitrary bytes: `ifconfig -a` alone, then
// the three outputs together (split at NUL bytes: ifconfig, networksetup,
// system_profiler) through the inventory code detection runs on a Mac,
// which must record what it cannot read and never throw.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "topology/ifconfig.h"
#include "topology/macos_inventory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts;
  size_t start = 0;
  while (parts.size() < 3) {
    size_t nul = bytes.find('\0', start);
    parts.emplace_back(bytes.substr(start, nul == std::string_view::npos
                                               ? std::string_view::npos
                                               : nul - start));
    if (nul == std::string_view::npos) break;
    start = nul + 1;
  }
  parts.resize(3);
  mcl::topology::HostInventory inv;
  try {
    inv.interfaces = mcl::topology::interfacesFromIfconfig(
        mcl::topology::parseIfconfig(parts[0]));
  } catch (const mcl::Error& e) {
    if (e.code() != mclInvalidArgument) std::abort();
  }
  mcl::topology::MacToolOutputs tools;
  tools.ifconfig = parts[0];
  tools.networksetup = parts[1];
  tools.systemProfiler = parts[2];
  tools.rdmaCtl = parts[1];
  try {
    mcl::topology::describeMacInterfaces(inv, tools);
  } catch (...) {
    std::abort();  // problems are recorded, never thrown
  }
  return 0;
}
