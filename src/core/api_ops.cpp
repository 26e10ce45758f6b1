// Collectives and point-to-point: validate, then run now, queue on a stream,
// or add to the open group.
#include "core/api_guard.h"
#include "core/group.h"
#include "core/handle_registry.h"
#include "core/op_validation.h"

namespace {

mclResult_t runOp(const char* function, mclComm_t comm, const mcl::OpArgs& op,
                  mclStream_t stream) {
  mclResult_t result = mcl::apiCall(function, [&] {
    mcl::CommRef ref(comm);
    ref->checkUsable();
    mcl::validateOp(*ref, op);
    mcl::submit(comm, ref.get(), op, stream);
  });
  if (result != mclSuccess) mcl::groupPoison(result, mcl::lastError());
  return result;
}

}  // namespace

extern "C" {

mclResult_t mclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                         mclDataType_t datatype, mclRedOp_t op, mclComm_t comm,
                         mclStream_t stream) {
  return runOp(
      __func__, comm,
      {mcl::OpKind::AllReduce, sendbuff, recvbuff, count, datatype, op, -1},
      stream);
}

mclResult_t mclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                         mclDataType_t datatype, mclComm_t comm,
                         mclStream_t stream) {
  return runOp(__func__, comm,
               {mcl::OpKind::AllGather, sendbuff, recvbuff, sendcount, datatype,
                mclSum, -1},
               stream);
}

mclResult_t mclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                         mclDataType_t datatype, int root, mclComm_t comm,
                         mclStream_t stream) {
  return runOp(__func__, comm,
               {mcl::OpKind::Broadcast, sendbuff, recvbuff, count, datatype,
                mclSum, root},
               stream);
}

mclResult_t mclReduce(const void* sendbuff, void* recvbuff, size_t count,
                      mclDataType_t datatype, mclRedOp_t op, int root,
                      mclComm_t comm, mclStream_t stream) {
  return runOp(
      __func__, comm,
      {mcl::OpKind::Reduce, sendbuff, recvbuff, count, datatype, op, root},
      stream);
}

mclResult_t mclReduceScatter(const void* sendbuff, void* recvbuff,
                             size_t recvcount, mclDataType_t datatype,
                             mclRedOp_t op, mclComm_t comm,
                             mclStream_t stream) {
  return runOp(__func__, comm,
               {mcl::OpKind::ReduceScatter, sendbuff, recvbuff, recvcount,
                datatype, op, -1},
               stream);
}

mclResult_t mclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                        mclDataType_t datatype, mclComm_t comm,
                        mclStream_t stream) {
  return runOp(
      __func__, comm,
      {mcl::OpKind::AllToAll, sendbuff, recvbuff, count, datatype, mclSum, -1},
      stream);
}

mclResult_t mclBarrier(mclComm_t comm, mclStream_t stream) {
  return runOp(
      __func__, comm,
      {mcl::OpKind::Barrier, nullptr, nullptr, 0, mclUint8, mclMax, -1},
      stream);
}

mclResult_t mclSend(const void* sendbuff, size_t count, mclDataType_t datatype,
                    int peer, mclComm_t comm, mclStream_t stream) {
  return runOp(
      __func__, comm,
      {mcl::OpKind::Send, sendbuff, nullptr, count, datatype, mclSum, peer},
      stream);
}

mclResult_t mclRecv(void* recvbuff, size_t count, mclDataType_t datatype,
                    int peer, mclComm_t comm, mclStream_t stream) {
  return runOp(
      __func__, comm,
      {mcl::OpKind::Recv, nullptr, recvbuff, count, datatype, mclSum, peer},
      stream);
}

}  // extern "C"
