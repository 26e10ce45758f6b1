// What a peer's transport says of itself in init's all-gather: the bytes
// each Device (shm, tcp, rdma) encodes in details() and decodes in learn().
// The first input byte picks the transport, the rest is one rank's details.
// Every input is learned, or refused with mclRemoteError (malformed) or
// mclInvalidUsage (settings that differ from this rank's); what is learned
// can be described without a fault.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/param_source.h"
#include "fuzz_check.h"
#include "topology/cluster.h"
#include "transports/rdma/rdma_device.h"
#include "transports/shm/shm_device.h"
#include "transports/tcp/tcp_device.h"

namespace {

// Every transport's defaults, as its registry rows give them.
class Defaults final : public mcl::ParamSource {
 public:
  std::string text(const char* name) const override {
    for (mcl::ParamTable table :
         {mcl::transport::shm::shmParams(), mcl::transport::tcp::tcpParams(),
          mcl::transport::rdma::rdmaParams()})
      for (const mcl::ParamDef& p : table)
        if (strcmp(p.name, name) == 0) return p.defaultValue;
    fprintf(stderr, "unregistered parameter %s\n", name);
    abort();
  }
  int64_t integer(const char* name, int64_t, int64_t) const override {
    return strtoll(text(name).c_str(), nullptr, 10);
  }
};

std::unique_ptr<mcl::transport::Device> make(uint8_t which) {
  static const Defaults defaults;
  mcl::transport::DeviceInit init;
  init.label = "fuzz";
  init.params = &defaults;
  std::unique_ptr<mcl::transport::Device> d;
  switch (which % 3) {
    case 0:
      d = std::make_unique<mcl::transport::shm::ShmDevice>(init);
      break;
    case 1:
      d = std::make_unique<mcl::transport::tcp::TcpDevice>(init);
      break;
    default:
      d = std::make_unique<mcl::transport::rdma::RdmaDevice>(init);
  }
  d->joined(1, {{"host", "host", 1}});
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::unique_ptr<mcl::transport::Device> device = make(data[0]);
  const std::vector<std::vector<uint8_t>> all{
      std::vector<uint8_t>(data + 1, data + size)};
  static const mcl::topology::Cluster cluster;
  try {
    device->learn(all, cluster);
  } catch (const mcl::Error& e) {
    mcl::fuzz::check(e.code() == mclRemoteError || e.code() == mclInvalidUsage,
                     "refused with mclRemoteError or mclInvalidUsage");
    return 0;
  }
  mcl::topology::RankPath path;
  device->describePath(0, 0, path);
  mcl::fuzz::check(path.links.size() <= 64 * 1024,
                   "a path's links come from the details");
  return 0;
}
