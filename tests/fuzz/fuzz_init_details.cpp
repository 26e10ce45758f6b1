// What a peer sends in init's first all-gather (core/init/init_details.h): its
// transports' details, host inventory and shared settings. Every input is
// decoded or refused with mclRemoteError; what decodes encodes back to the
// very same bytes (the encoding has one form), and no field passes its
// bound.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/init/init_details.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> bytes(data, data + size);
  mcl::InitDetails d;
  if (!mcl::fuzz::acceptedOr(mclRemoteError,
                             [&] { d = mcl::decodeDetails(bytes); }))
    return 0;
  mcl::fuzz::check(mcl::encodeDetails(d) == bytes,
                   "init details re-encode to the same bytes");
  bool devicesBounded = d.devices.size() <= mcl::kMaxDevicesInDetails;
  for (const auto& [name, blob] : d.devices)
    devicesBounded &=
        name.size() <= 16 && blob.size() <= mcl::kMaxDeviceDetailsBytes;
  mcl::fuzz::check(devicesBounded && d.transport.size() <= 64 &&
                       d.algorithms.size() <= 1024 &&
                       d.topoFile.size() <= 4096 &&
                       d.inventory.size() <= (1u << 20),
                   "every field within its bound");
  return 0;
}
