#include "transports/device.h"

namespace mcl::transport {

const char* linkKindName(LinkKind kind) {
  switch (kind) {
    case LinkKind::SharedMemory:
      return "shm";
    case LinkKind::EmulatedRdma:
      return "emulated rdma";
    case LinkKind::Rdma:
      return "rdma";
    case LinkKind::Socket:
      return "tcp";
  }
  return "tcp";
}

}  // namespace mcl::transport
