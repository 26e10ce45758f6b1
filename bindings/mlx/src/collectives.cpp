// The data calls MLX makes: all_sum, all_max and all_min (MPI_Allreduce, in
// place or not), all_gather (MPI_Allgather), send and recv (MPI_Send with
// tag 0, MPI_Recv from a named rank with MPI_ANY_TAG), each on mcl's call
// of the same name, blocking, as MPI's are.
#include <mcl/mcl.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "calls.h"
#include "comms.h"
#include "datatypes.h"
#include "failure.h"
#include "mpi_abi.h"
#include "ops.h"
#include "predefined.h"
#include "reduce_plan.h"

using namespace mcl::mpi;

namespace {

std::string countText(int count, const Datatype& type) {
  return "count " + std::to_string(count) + " of " + datatypeText(type);
}

// The gathered way: every rank's input, folded in rank order
// (in[0] op (in[1] op (... in[n-1]))), as MPI orders a reduction.
int gatherAndFold(Comm& comm, const void* in, void* out, int count,
                  const Datatype& type, MPI_Datatype handle, const Op& op) {
  const size_t bytes = size_t(count) * type.bytes;
  std::vector<unsigned char> all(bytes * size_t(comm.size));
  const mclResult_t r =
      mclAllGather(in, all.data(), bytes, mclUint8, comm.mcl, nullptr);
  if (r != mclSuccess)
    return failMcl(r, "MPI_Allreduce", comm.mcl,
                   countText(count, type) + ", " + opText(op));
  std::memcpy(out, all.data() + bytes * size_t(comm.size - 1), bytes);
  for (int rank = comm.size - 2; rank >= 0; --rank)
    fold(type, handle, op, all.data() + bytes * size_t(rank), out, count);
  return kSuccess;
}

}  // namespace

extern "C" {

MCL_MPI_EXPORT int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op opHandle,
                                 MPI_Comm commHandle) {
  constexpr const char* kCall = "MPI_Allreduce";
  const DataCall c =
      usableDataCall(kCall, commHandle, "datatype", datatype, "count", count);
  if (c.type == nullptr) return c.status;
  Comm* comm = c.comm;
  const Datatype* type = c.type;
  const Op* op = findOp(opHandle);
  if (op == nullptr)
    return fail(kErrOp, kCall, "op " + handleText(opHandle, "an op"));
  const size_t bytes = size_t(count) * type->bytes;
  if (sendbuf == kInPlace) sendbuf = recvbuf;
  if (count > 0 && (recvbuf == nullptr || sendbuf == nullptr))
    return fail(kErrBuffer, kCall,
                std::string(recvbuf == nullptr ? "recvbuf" : "sendbuf") +
                    " is NULL for " + countText(count, *type));
  if (comm->mcl == nullptr || count == 0) {  // a world of one
    if (sendbuf != recvbuf && bytes > 0) std::memmove(recvbuf, sendbuf, bytes);
    return kSuccess;
  }
  const ReducePlan plan = planReduce(*type, *op);
  if (!plan.refusal.empty()) return fail(kErrOp, kCall, plan.refusal);
  if (!plan.native)
    return gatherAndFold(*comm, sendbuf, recvbuf, count, *type, datatype, *op);
  const mclResult_t r =
      mclAllReduce(sendbuf, recvbuf, size_t(count) * plan.elementsPerItem,
                   plan.type, plan.op, comm->mcl, nullptr);
  if (r != mclSuccess)
    return failMcl(r, kCall, comm->mcl,
                   countText(count, *type) + ", " + opText(*op));
  return kSuccess;
}

MCL_MPI_EXPORT int MPI_Allgather(const void* sendbuf, int sendcount,
                                 MPI_Datatype sendtype, void* recvbuf,
                                 int recvcount, MPI_Datatype recvtype,
                                 MPI_Comm commHandle) {
  constexpr const char* kCall = "MPI_Allgather";
  const DataCall c = usableDataCall(kCall, commHandle, "recvtype", recvtype,
                                    "recvcount", recvcount);
  if (c.type == nullptr) return c.status;
  Comm* comm = c.comm;
  const Datatype* rtype = c.type;
  int status = kSuccess;
  const size_t bytes = size_t(recvcount) * rtype->bytes;
  if (sendbuf == kInPlace) {
    sendbuf = static_cast<char*>(recvbuf) + bytes * size_t(comm->rank);
  } else {
    const Datatype* stype =
        usableDatatype(kCall, "sendtype", sendtype, &status);
    if (stype == nullptr ||
        !usableCount(kCall, "sendcount", sendcount, &status))
      return status;
    if (size_t(sendcount) * stype->bytes != bytes)
      return fail(kErrArg, kCall,
                  "send " + countText(sendcount, *stype) + " and receive " +
                      countText(recvcount, *rtype) +
                      " per rank differ in size");
  }
  if (bytes > 0 && (recvbuf == nullptr || sendbuf == nullptr))
    return fail(
        kErrBuffer, kCall,
        std::string(recvbuf == nullptr ? "recvbuf" : "sendbuf") + " is NULL");
  if (comm->mcl == nullptr || bytes == 0) {
    if (bytes > 0 && sendbuf != recvbuf) std::memmove(recvbuf, sendbuf, bytes);
    return kSuccess;
  }
  const mclResult_t r =
      mclAllGather(sendbuf, recvbuf, bytes, mclUint8, comm->mcl, nullptr);
  if (r != mclSuccess)
    return failMcl(r, kCall, comm->mcl, countText(recvcount, *rtype));
  return kSuccess;
}

MCL_MPI_EXPORT int MPI_Send(const void* buf, int count, MPI_Datatype datatype,
                            int dest, int tag, MPI_Comm commHandle) {
  constexpr const char* kCall = "MPI_Send";
  const DataCall c =
      usableDataCall(kCall, commHandle, "datatype", datatype, "count", count);
  if (c.type == nullptr) return c.status;
  Comm* comm = c.comm;
  const Datatype* type = c.type;
  if (dest < 0 || dest >= comm->size || dest == comm->rank)
    return fail(kErrRank, kCall,
                "dest " + std::to_string(dest) + " is not another rank of " +
                    std::to_string(comm->size));
  if (tag != 0)
    return fail(kErrTag, kCall,
                "tag " + std::to_string(tag) +
                    ": mcl keeps each pair's messages in order and has no "
                    "tags; MLX sends with tag 0");
  const size_t bytes = size_t(count) * type->bytes;
  const mclResult_t r = mclSend(buf, bytes, mclUint8, dest, comm->mcl, nullptr);
  if (r != mclSuccess)
    return failMcl(
        r, kCall, comm->mcl,
        countText(count, *type) + " to rank " + std::to_string(dest));
  return kSuccess;
}

MCL_MPI_EXPORT int MPI_Recv(void* buf, int count, MPI_Datatype datatype,
                            int source, int tag, MPI_Comm commHandle,
                            MPI_Status* statusOut) {
  constexpr const char* kCall = "MPI_Recv";
  const DataCall c =
      usableDataCall(kCall, commHandle, "datatype", datatype, "count", count);
  if (c.type == nullptr) return c.status;
  Comm* comm = c.comm;
  const Datatype* type = c.type;
  if (source < 0 || source >= comm->size || source == comm->rank)
    return fail(kErrRank, kCall,
                "source " + std::to_string(source) +
                    " is not another rank of " + std::to_string(comm->size) +
                    (source == kAnySource ? " (MPI_ANY_SOURCE: mcl receives "
                                            "from a named rank)"
                                          : ""));
  if (tag != 0 && tag != kAnyTag)
    return fail(kErrTag, kCall,
                "tag " + std::to_string(tag) +
                    ": mcl has no tags; MLX receives with MPI_ANY_TAG");
  const size_t bytes = size_t(count) * type->bytes;
  const mclResult_t r =
      mclRecv(buf, bytes, mclUint8, source, comm->mcl, nullptr);
  if (r != mclSuccess)
    return failMcl(
        r, kCall, comm->mcl,
        countText(count, *type) + " from rank " + std::to_string(source));
  if (statusOut != nullptr) {
    statusOut->MPI_SOURCE = source;
    statusOut->MPI_TAG = 0;
    statusOut->MPI_ERROR = kSuccess;
    statusOut->_cancelled = 0;
    statusOut->_ucount = bytes;
  }
  return kSuccess;
}

}  // extern "C"
