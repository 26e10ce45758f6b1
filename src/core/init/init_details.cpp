#include "core/init/init_details.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/wire.h"

namespace mcl {

std::vector<uint8_t> encodeDetails(const InitDetails& d) {
  WireWriter w;
  w.u32(static_cast<uint32_t>(d.devices.size()));
  for (const auto& [name, bytes] : d.devices) {
    w.str(name);
    w.blob(bytes.data(), bytes.size());
  }
  w.str(d.inventory);
  w.str(d.topoFile);
  w.str(d.transport);
  w.str(d.algorithms);
  w.u32(d.cores);
  w.str(d.sideChannel);
  w.u32(d.peerTimeoutSeconds);
  return w.take();
}

InitDetails decodeDetails(const std::vector<uint8_t>& bytes) {
  WireReader r(bytes.data(), bytes.size(), "init details");
  InitDetails d;
  uint32_t devices = r.u32();
  if (devices > kMaxDevicesInDetails)
    throw error(mclRemoteError,
                "malformed init details: %u transports (at most %zu)", devices,
                kMaxDevicesInDetails);
  for (uint32_t i = 0; i < devices; ++i) {
    std::string name = r.str(16);
    d.devices.emplace_back(std::move(name), r.blob(kMaxDeviceDetailsBytes));
  }
  d.inventory = r.str(1 << 20);
  d.topoFile = r.str(4096);
  d.transport = r.str(64);
  d.algorithms = r.str(1024);
  d.cores = r.u32();
  d.sideChannel = r.str(64);
  d.peerTimeoutSeconds = r.u32();
  r.finish();
  return d;
}

}  // namespace mcl
