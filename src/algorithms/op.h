// One operation as the API received it, validated: what the algorithms turn
// into steps.
#pragma once

#include <mcl/mcl.h>

#include <array>
#include <cstddef>

#include "base/collective.h"

namespace mcl {

// A PreMulSum op resolved for one call: each rank's input is multiplied by
// the scalar (read from `pointer` when the call runs, else `value`) before
// an ordinary sum.
struct PreMultiply {
  bool active = false;
  std::array<std::byte, 8> value{};
  const void* pointer = nullptr;
};

struct OpArgs {
  Collective kind = Collective::Barrier;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  size_t count = 0;  // per the API call (sendcount, recvcount, ...)
  mclDataType_t type = mclUint8;
  mclRedOp_t op = mclSum;
  int root = -1;            // root of broadcast/reduce, peer of send/recv
  PreMultiply preMultiply;  // op is then mclSum
  // Zero-copy is ruled out: the call streams through the rings (the
  // fallback of a zero-copy attempt, and staged inputs).
  bool ringsOnly = false;
};

}  // namespace mcl
