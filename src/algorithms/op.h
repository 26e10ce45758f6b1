// One operation as the API received it, validated: what the algorithms turn
// into steps.
#pragma once

#include <mcl/mcl.h>

#include <cstddef>

namespace mcl {

enum class OpKind {
  AllReduce,
  AllGather,
  Broadcast,
  Reduce,
  ReduceScatter,
  AllToAll,
  Barrier,
  Send,
  Recv,
};

const char* opKindName(OpKind kind);

inline bool isPointToPoint(OpKind kind) {
  return kind == OpKind::Send || kind == OpKind::Recv;
}

struct OpArgs {
  OpKind kind = OpKind::Barrier;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  size_t count = 0;  // per the API call (sendcount, recvcount, ...)
  mclDataType_t type = mclUint8;
  mclRedOp_t op = mclSum;
  int root = -1;  // root of broadcast/reduce, peer of send/recv
};

}  // namespace mcl
