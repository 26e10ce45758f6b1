#include "core/init_details.h"

#include <cstdint>
#include <vector>

#include "base/wire.h"

namespace mcl {

std::vector<uint8_t> encodeDetails(const TransportDetails& d) {
  WireWriter w;
  w.u64(d.shmCapacity);
  w.u64(d.tcpCapacity);
  w.u32(d.tcpSockets);
  w.u32(d.tcpSlotBytes);
  w.str(d.segment);
  w.blob(d.endpoints.data(), d.endpoints.size());
  w.str(d.inventory);
  w.str(d.topoFile);
  w.str(d.transport);
  w.str(d.algorithms);
  w.u32(d.rdmaFrameBytes);
  w.u32(d.rdmaDepth);
  w.u32(d.cores);
  return w.take();
}

TransportDetails decodeDetails(const std::vector<uint8_t>& bytes) {
  WireReader r(bytes.data(), bytes.size(), "transport details");
  TransportDetails d;
  d.shmCapacity = r.u64();
  d.tcpCapacity = r.u64();
  d.tcpSockets = r.u32();
  d.tcpSlotBytes = r.u32();
  d.segment = r.str(64);
  d.endpoints = r.blob(64 * 1024);
  d.inventory = r.str(1 << 20);
  d.topoFile = r.str(4096);
  d.transport = r.str(64);
  d.algorithms = r.str(1024);
  d.rdmaFrameBytes = r.u32();
  d.rdmaDepth = r.u32();
  d.cores = r.u32();
  r.finish();
  return d;
}

}  // namespace mcl
