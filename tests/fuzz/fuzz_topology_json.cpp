// MCL_TOPO_FILE's reader on arbitrary bytes: every defect must come back as
// mcl::Error(mclInvalidArgument), never a crash, a hang or another
// exception; whatever it accepts must survive a dump and a second read.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/error.h"
#include "topology/cluster_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  mcl::topology::Cluster cluster;
  try {
    cluster = mcl::topology::clusterFromText(text, "fuzz.json");
  } catch (const mcl::Error& e) {
    if (e.code() != mclInvalidArgument) std::abort();
    return 0;
  }
  std::string dumped = mcl::topology::clusterToJson(cluster).dump();
  mcl::topology::Cluster again =
      mcl::topology::clusterFromText(dumped, "again.json");
  if (again.shape != cluster.shape ||
      again.links.size() != cluster.links.size() ||
      again.hosts.size() != cluster.hosts.size())
    std::abort();
  return 0;
}
