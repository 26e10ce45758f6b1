#include "core/api/op_validation.h"

#include <cstddef>
#include <cstdint>

#include "algorithms/kernels/types.h"
#include "base/error.h"

namespace mcl {

namespace {

size_t checkedBytes(const mclComm& comm, size_t count, size_t elementBytes,
                    size_t factor, const char* what) {
  size_t bytes = 0;
  if (__builtin_mul_overflow(count, elementBytes, &bytes) ||
      __builtin_mul_overflow(bytes, factor, &bytes) ||
      bytes > static_cast<size_t>(PTRDIFF_MAX))
    throw error(mclInvalidArgument,
                "%s: %s %zu x %zu-byte elements%s overflows the address space",
                comm.label().c_str(), what, count, elementBytes,
                factor > 1 ? " x nranks" : "");
  return bytes;
}

void checkPointer(const mclComm& comm, const void* p, const char* name,
                  size_t bytes) {
  if (p == nullptr && bytes > 0)
    throw error(mclInvalidArgument, "%s: %s is NULL", comm.label().c_str(),
                name);
}

// Buffers may be identical (in-place) or disjoint, never partly overlapping.
void checkOverlap(const mclComm& comm, const void* send, size_t sendBytes,
                  const void* recv, size_t recvBytes, const void* inPlaceSend) {
  if (send == nullptr || recv == nullptr || sendBytes == 0 || recvBytes == 0)
    return;
  if (send == inPlaceSend) return;
  auto s = reinterpret_cast<uintptr_t>(send);
  auto r = reinterpret_cast<uintptr_t>(recv);
  if (s < r + recvBytes && r < s + sendBytes)
    throw error(mclInvalidArgument,
                "%s: sendbuff and recvbuff overlap without being in-place "
                "(see the in-place rules in mcl.h)",
                comm.label().c_str());
}

void checkRank(const mclComm& comm, int value, const char* name) {
  if (value < 0 || value >= comm.nranks)
    throw error(mclInvalidArgument, "%s: %s %d is out of range [0, %d)",
                comm.label().c_str(), name, value, comm.nranks);
}

// The buffers of `op` against its kind: each pointer set where a rank
// needs it, every size within size_t, sendbuff and recvbuff apart unless
// the call is in place.
void checkBuffers(const mclComm& comm, const OpArgs& op, size_t es) {
  const auto n = static_cast<size_t>(comm.nranks);
  const auto rank = static_cast<size_t>(comm.rank);
  const char* sendName = "sendbuff";
  const char* recvName = "recvbuff";
  switch (op.kind) {
    case Collective::AllReduce: {
      size_t bytes = checkedBytes(comm, op.count, es, 1, "count");
      checkPointer(comm, op.sendbuff, sendName, bytes);
      checkPointer(comm, op.recvbuff, recvName, bytes);
      checkOverlap(comm, op.sendbuff, bytes, op.recvbuff, bytes, op.recvbuff);
      break;
    }
    case Collective::AllGather: {
      size_t bytes = checkedBytes(comm, op.count, es, 1, "sendcount");
      size_t total = checkedBytes(comm, op.count, es, n, "sendcount");
      checkPointer(comm, op.sendbuff, sendName, bytes);
      checkPointer(comm, op.recvbuff, recvName, total);
      const void* inPlace =
          op.recvbuff ? static_cast<const char*>(op.recvbuff) + rank * bytes
                      : nullptr;
      checkOverlap(comm, op.sendbuff, bytes, op.recvbuff, total, inPlace);
      break;
    }
    case Collective::ReduceScatter: {
      size_t bytes = checkedBytes(comm, op.count, es, 1, "recvcount");
      size_t total = checkedBytes(comm, op.count, es, n, "recvcount");
      checkPointer(comm, op.sendbuff, sendName, total);
      checkPointer(comm, op.recvbuff, recvName, bytes);
      const void* inPlace =
          op.sendbuff ? static_cast<const char*>(op.sendbuff) + rank * bytes
                      : nullptr;
      // In-place means recvbuff is this rank's block of sendbuff.
      if (op.recvbuff != inPlace)
        checkOverlap(comm, op.sendbuff, total, op.recvbuff, bytes, nullptr);
      break;
    }
    case Collective::AllToAll: {
      size_t total = checkedBytes(comm, op.count, es, n, "count");
      checkPointer(comm, op.sendbuff, sendName, total);
      checkPointer(comm, op.recvbuff, recvName, total);
      checkOverlap(comm, op.sendbuff, total, op.recvbuff, total, op.recvbuff);
      break;
    }
    case Collective::Broadcast:
    case Collective::Reduce: {
      checkRank(comm, op.root, "root");
      size_t bytes = checkedBytes(comm, op.count, es, 1, "count");
      bool root = comm.rank == op.root;
      bool needSend = op.kind == Collective::Reduce || root;
      bool needRecv = op.kind == Collective::Broadcast || root;
      if (needSend) checkPointer(comm, op.sendbuff, sendName, bytes);
      if (needRecv) checkPointer(comm, op.recvbuff, recvName, bytes);
      if (needSend && needRecv)
        checkOverlap(comm, op.sendbuff, bytes, op.recvbuff, bytes, op.recvbuff);
      break;
    }
    case Collective::Send:
    case Collective::Recv: {
      checkRank(comm, op.root, "peer");
      size_t bytes = checkedBytes(comm, op.count, es, 1, "count");
      if (op.kind == Collective::Send) {
        checkPointer(comm, op.sendbuff, sendName, bytes);
      } else {
        checkPointer(comm, op.recvbuff, recvName, bytes);
      }
      break;
    }
    case Collective::Barrier:
      break;
    case Collective::SendRecv:
      // The API makes a send and a receive; a pair is the benchmarks' word.
      throw error(mclInternalError, "%s: an operation of kind sendrecv",
                  comm.label().c_str());
  }
}

}  // namespace

void validateOp(const mclComm& comm, const OpArgs& op) {
  if (!kernels::isValidType(op.type))
    throw error(
        mclInvalidArgument, "%s: datatype %d is not an mclDataType_t (0..%d)",
        comm.label().c_str(), static_cast<int>(op.type), mclNumTypes - 1);
  const size_t es = kernels::typeSize(op.type);
  bool reduces = op.kind == Collective::AllReduce ||
                 op.kind == Collective::Reduce ||
                 op.kind == Collective::ReduceScatter;
  if (reduces && !kernels::isValidOp(op.op))
    throw error(mclInvalidArgument, "%s: op %d is not an mclRedOp_t (0..%d)",
                comm.label().c_str(), static_cast<int>(op.op), mclNumOps - 1);
  checkBuffers(comm, op, es);
}

}  // namespace mcl
