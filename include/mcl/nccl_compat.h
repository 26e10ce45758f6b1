/*
 * NCCL's host API on mcl: a program written for NCCL includes this instead
 * of <nccl.h> and is rebuilt against mcl (docs/porting-from-nccl.md).
 *
 * Names, types, enums and constants map onto mcl's one to one. The version
 * macros say NCCL 2.19.0: the newest NCCL whose every host function mcl
 * has, so a program's NCCL_VERSION_CODE guards keep the code mcl can run
 * and leave out the rest (ncclGroupSimulateEnd, ncclCommInitRankScalable,
 * windows and later). Features of later NCCLs that mcl has (the FP8 types,
 * ncclAlltoAll, ncclTimeout) are here too, for programs that do not guard
 * them.
 *
 * What does not carry over (each named in the porting guide):
 *  - streams are mcl streams (mclStreamCreate); a NULL stream runs the call
 *    to completion before it returns. cudaStream_t names mcl's stream type
 *    here, unless the program also includes CUDA's runtime header first.
 *  - ncclConfig_t keeps NCCL 2.19's fields. blocking and netName ("Socket":
 *    TCP, "IB": RDMA, else mcl's choice) carry over; the GPU's fields
 *    (cgaClusterSize, minCTAs, maxCTAs) and splitShare have no meaning
 *    without a GPU and are accepted and left unused.
 *  - ncclCommCuDevice has no equivalent (mcl has no devices) and is not
 *    declared: a program that calls it fails to compile, on purpose.
 *  - ncclGetVersion gives NCCL_VERSION_CODE, the API level above (mcl's
 *    own version: mclGetVersion).
 */
#ifndef MCL_NCCL_COMPAT_H_
#define MCL_NCCL_COMPAT_H_

#include <limits.h>
#include <mcl/mcl.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --- Versions ----------------------------------------------------------- */
#define NCCL_MAJOR 2
#define NCCL_MINOR 19
#define NCCL_PATCH 0
#define NCCL_SUFFIX "-mcl"
/* NCCL's formula: codes before 2.9 had three digits after the major. */
#define NCCL_VERSION(X, Y, Z)                        \
  (((X) <= 2 && (Y) <= 8) ? (X)*1000 + (Y)*100 + (Z) \
                          : (X)*10000 + (Y)*100 + (Z))
#define NCCL_VERSION_CODE NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH)

/* --- Types and constants ------------------------------------------------ */
typedef mclComm_t ncclComm_t;
typedef mclUniqueId ncclUniqueId;
typedef mclResult_t ncclResult_t;
typedef mclDataType_t ncclDataType_t;
typedef mclRedOp_t ncclRedOp_t;
typedef mclScalarResidence_t ncclScalarResidence_t;
#if !defined(__CUDA_RUNTIME_H__) && !defined(MCL_NCCL_COMPAT_NO_CUDA_STREAM)
typedef mclStream_t cudaStream_t;
#endif

#define NCCL_UNIQUE_ID_BYTES MCL_UNIQUE_ID_BYTES
#define NCCL_COMM_NULL MCL_COMM_NULL
#define NCCL_SPLIT_NOCOLOR MCL_SPLIT_NOCOLOR
#define NCCL_CONFIG_UNDEF_INT INT_MIN
#define NCCL_CONFIG_UNDEF_PTR NULL

#define ncclSuccess mclSuccess
#define ncclUnhandledCudaError mclUnhandledDeviceError
#define ncclSystemError mclSystemError
#define ncclInternalError mclInternalError
#define ncclInvalidArgument mclInvalidArgument
#define ncclInvalidUsage mclInvalidUsage
#define ncclRemoteError mclRemoteError
#define ncclInProgress mclInProgress
#define ncclTimeout mclTimeout
#define ncclNumResults mclNumResults

#define ncclInt8 mclInt8
#define ncclChar mclChar
#define ncclUint8 mclUint8
#define ncclInt32 mclInt32
#define ncclInt mclInt
#define ncclUint32 mclUint32
#define ncclInt64 mclInt64
#define ncclUint64 mclUint64
#define ncclFloat16 mclFloat16
#define ncclHalf mclHalf
#define ncclFloat32 mclFloat32
#define ncclFloat mclFloat
#define ncclFloat64 mclFloat64
#define ncclDouble mclDouble
#define ncclBfloat16 mclBfloat16
#define ncclFloat8e4m3 mclFloat8e4m3
#define ncclFloat8e5m2 mclFloat8e5m2
#define ncclNumTypes mclNumTypes

#define ncclSum mclSum
#define ncclProd mclProd
#define ncclMax mclMax
#define ncclMin mclMin
#define ncclAvg mclAvg
#define ncclNumOps mclNumOps
#define ncclMaxRedOp mclMaxRedOp

#define ncclScalarDevice mclScalarDevice
#define ncclScalarHostImmediate mclScalarHostImmediate

/* NCCL 2.19's config, as programs fill it in (see the top of this file). */
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;
  int cgaClusterSize;
  int minCTAs;
  int maxCTAs;
  const char* netName;
  int splitShare;
} ncclConfig_t;

#define NCCL_CONFIG_INITIALIZER                                              \
  {                                                                          \
    sizeof(ncclConfig_t), 0xcafebeefu, NCCL_VERSION_CODE,                    \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_PTR, NCCL_CONFIG_UNDEF_INT  \
  }

/* An ncclConfig_t as mcl's (NULL stays NULL; a config that was not made
 * with NCCL_CONFIG_INITIALIZER is passed on as one mcl refuses, so the
 * call fails naming it). */
static inline const mclConfig_t* mclFromNcclConfig_(const ncclConfig_t* nccl,
                                                    mclConfig_t* out) {
  const mclConfig_t initial = MCL_CONFIG_INITIALIZER;
  if (nccl == NULL) return NULL;
  *out = initial;
  if (nccl->magic != 0xcafebeefu) {
    out->magic = nccl->magic;
    return out;
  }
  out->blocking = nccl->blocking;
  if (nccl->netName != NULL) {
    const char* n = nccl->netName;
    if ((n[0] == 'S' || n[0] == 's') && (n[1] == 'o' || n[1] == 'O'))
      out->transport = "tcp"; /* "Socket" */
    else if ((n[0] == 'I' || n[0] == 'i') && (n[1] == 'B' || n[1] == 'b') &&
             n[2] == '\0')
      out->transport = "rdma"; /* "IB" */
  }
  return out;
}

/* --- Functions ---------------------------------------------------------- */
static inline ncclResult_t ncclGetVersion(int* version) {
  if (version == NULL) return mclGetVersion(version); /* the error */
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}
#define ncclGetErrorString mclGetErrorString
#define ncclGetLastError mclGetLastError
#define ncclGetUniqueId mclGetUniqueId
#define ncclCommInitRank mclCommInitRank
#define ncclCommInitAll mclCommInitAll
static inline ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks,
                                                  ncclUniqueId commId, int rank,
                                                  ncclConfig_t* config) {
  mclConfig_t converted;
  return mclCommInitRankConfig(
      comm, nranks, commId, rank,
      (mclConfig_t*)mclFromNcclConfig_(config, &converted));
}
static inline ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
                                         ncclComm_t* newcomm,
                                         ncclConfig_t* config) {
  mclConfig_t converted;
  return mclCommSplit(comm, color, key, newcomm,
                      (mclConfig_t*)mclFromNcclConfig_(config, &converted));
}
#define ncclCommFinalize mclCommFinalize
#define ncclCommDestroy mclCommDestroy
#define ncclCommAbort mclCommAbort
#define ncclCommGetAsyncError mclCommGetAsyncError
#define ncclCommCount mclCommCount
#define ncclCommUserRank mclCommUserRank
#define ncclMemAlloc mclMemAlloc
#define ncclMemFree mclMemFree
#define ncclCommRegister mclCommRegister
#define ncclCommDeregister mclCommDeregister
#define ncclRedOpCreatePreMulSum mclRedOpCreatePreMulSum
#define ncclRedOpDestroy mclRedOpDestroy
#define ncclAllReduce mclAllReduce
#define ncclAllGather mclAllGather
#define ncclBroadcast mclBroadcast
#define ncclBcast mclBcast
#define ncclReduce mclReduce
#define ncclReduceScatter mclReduceScatter
#define ncclAlltoAll mclAlltoAll
#define ncclSend mclSend
#define ncclRecv mclRecv
#define ncclGroupStart mclGroupStart
#define ncclGroupEnd mclGroupEnd

#ifdef __cplusplus
}
#endif

#endif /* MCL_NCCL_COMPAT_H_ */
