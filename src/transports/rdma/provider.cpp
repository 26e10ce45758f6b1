#include "transports/rdma/provider.h"

#include <memory>
#include <optional>
#include <utility>

#include "base/error.h"
#include "platform/os_version.h"
#include "transports/rdma/emu_provider.h"
#if MCL_HAVE_VERBS
#include "transports/rdma/ibverbs_provider.h"
#endif

namespace mcl::transport::rdma {

const char* qpTypeName(QpType type) { return type == QpType::UC ? "UC" : "RC"; }

namespace {

std::unique_ptr<Provider> openEmu(const ProviderOptions& o) {
  if (o.emuCabling.empty())
    throw error(mclInvalidArgument,
                "MCL_RDMA_PROVIDER=emu needs MCL_EMU_FABRIC: the path of a "
                "JACCL device-matrix JSON file saying which rdma_enX of which "
                "Mac (rank) is cabled to which");
  EmuSettings s;
  s.fabric = buildEmuFabric(o.emuCabling, o.emuFaults);
  s.mac = o.emuMac;
  s.nameSpace = o.emuNamespace;
  s.latencyUs = o.emuLatencyUs;
  s.gbps = o.emuGbps;
  s.rc = o.emuRc;
  std::optional<platform::OsVersion> macos =
      platform::parseOsVersion(o.emuMacos);
  if (!macos)
    throw error(mclInvalidArgument,
                "MCL_EMU_MACOS=%s is not a macOS version (like 26.2)",
                o.emuMacos.c_str());
  s.macos = *macos;
  return openEmuProvider(std::move(s));
}

}  // namespace

std::unique_ptr<Provider> openProvider(const ProviderOptions& o) {
  if (o.provider == "emu") return openEmu(o);
  if (o.provider == "ibverbs") {
#if MCL_HAVE_VERBS
    return openIbverbsProvider(o.library);
#else
    throw error(mclSystemError,
                "this mcl was built without the verbs header "
                "(<infiniband/verbs.h>: libibverbs-dev on Linux, the macOS "
                "26.2 SDK), so it cannot use RDMA hardware (no RDMA devices "
                "it can reach); MCL_RDMA_PROVIDER=emu runs the emulated "
                "fabric");
#endif
  }
  throw error(mclInvalidArgument,
              "MCL_RDMA_PROVIDER=%s is unknown: use ibverbs or emu",
              o.provider.c_str());
}

}  // namespace mcl::transport::rdma
