// Collectives and point-to-point: validate, then run now, queue on a stream,
// or add to the open group.
#include "core/api/api_guard.h"

#include <cstddef>
#include "core/api/op_validation.h"
#include "core/comm/handle_registry.h"
#include "core/run/group.h"

namespace {

mcl::OpArgs makeOp(mcl::Collective kind, const void* sendbuff, void* recvbuff,
                   size_t count, mclDataType_t type, mclRedOp_t op, int root) {
  mcl::OpArgs a;
  a.kind = kind;
  a.sendbuff = sendbuff;
  a.recvbuff = recvbuff;
  a.count = count;
  a.type = type;
  a.op = op;
  a.root = root;
  return a;
}

mclResult_t runOp(const char* function, mclComm_t comm, const mcl::OpArgs& op,
                  mclStream_t stream) {
  mclResult_t result = mcl::apiCall(function, [&] {
    mcl::CommRef ref(comm);
    ref->checkUsable();
    const mcl::OpArgs resolved = ref->customOps.resolve(op, ref->label());
    mcl::validateOp(*ref, resolved);
    mcl::submit(comm, ref.get(), resolved, stream);
  });
  if (result != mclSuccess) mcl::groupPoison(result, mcl::lastError());
  return result;
}

}  // namespace

extern "C" {

mclResult_t mclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                         mclDataType_t datatype, mclRedOp_t op, mclComm_t comm,
                         mclStream_t stream) {
  return runOp(__func__, comm,
               makeOp(mcl::Collective::AllReduce, sendbuff, recvbuff, count,
                      datatype, op, -1),
               stream);
}

mclResult_t mclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                         mclDataType_t datatype, mclComm_t comm,
                         mclStream_t stream) {
  return runOp(__func__, comm,
               makeOp(mcl::Collective::AllGather, sendbuff, recvbuff, sendcount,
                      datatype, mclSum, -1),
               stream);
}

mclResult_t mclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                         mclDataType_t datatype, int root, mclComm_t comm,
                         mclStream_t stream) {
  return runOp(__func__, comm,
               makeOp(mcl::Collective::Broadcast, sendbuff, recvbuff, count,
                      datatype, mclSum, root),
               stream);
}

mclResult_t mclBcast(void* buff, size_t count, mclDataType_t datatype, int root,
                     mclComm_t comm, mclStream_t stream) {
  return runOp(__func__, comm,
               makeOp(mcl::Collective::Broadcast, buff, buff, count, datatype,
                      mclSum, root),
               stream);
}

mclResult_t mclReduce(const void* sendbuff, void* recvbuff, size_t count,
                      mclDataType_t datatype, mclRedOp_t op, int root,
                      mclComm_t comm, mclStream_t stream) {
  return runOp(__func__, comm,
               makeOp(mcl::Collective::Reduce, sendbuff, recvbuff, count,
                      datatype, op, root),
               stream);
}

mclResult_t mclReduceScatter(const void* sendbuff, void* recvbuff,
                             size_t recvcount, mclDataType_t datatype,
                             mclRedOp_t op, mclComm_t comm,
                             mclStream_t stream) {
  return runOp(__func__, comm,
               makeOp(mcl::Collective::ReduceScatter, sendbuff, recvbuff,
                      recvcount, datatype, op, -1),
               stream);
}

mclResult_t mclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                        mclDataType_t datatype, mclComm_t comm,
                        mclStream_t stream) {
  return runOp(__func__, comm,
               makeOp(mcl::Collective::AllToAll, sendbuff, recvbuff, count,
                      datatype, mclSum, -1),
               stream);
}

mclResult_t mclRedOpCreatePreMulSum(mclRedOp_t* op, void* scalar,
                                    mclDataType_t datatype,
                                    mclScalarResidence_t residence,
                                    mclComm_t comm) {
  return mcl::apiCall(__func__, [&] {
    mcl::CommRef ref(comm);
    if (op == nullptr) throw mcl::error(mclInvalidArgument, "op is NULL");
    *op = ref->customOps.createPreMulSum(scalar, datatype, residence,
                                         ref->label());
  });
}

mclResult_t mclRedOpDestroy(mclRedOp_t op, mclComm_t comm) {
  return mcl::apiCall(__func__, [&] {
    mcl::CommRef ref(comm);
    ref->customOps.destroy(op, ref->label());
  });
}

mclResult_t mclBarrier(mclComm_t comm, mclStream_t stream) {
  return runOp(__func__, comm,
               makeOp(mcl::Collective::Barrier, nullptr, nullptr, 0, mclUint8,
                      mclMax, -1),
               stream);
}

mclResult_t mclSend(const void* sendbuff, size_t count, mclDataType_t datatype,
                    int peer, mclComm_t comm, mclStream_t stream) {
  return runOp(__func__, comm,
               makeOp(mcl::Collective::Send, sendbuff, nullptr, count, datatype,
                      mclSum, peer),
               stream);
}

mclResult_t mclRecv(void* recvbuff, size_t count, mclDataType_t datatype,
                    int peer, mclComm_t comm, mclStream_t stream) {
  return runOp(__func__, comm,
               makeOp(mcl::Collective::Recv, nullptr, recvbuff, count, datatype,
                      mclSum, peer),
               stream);
}

}  // extern "C"
