/*
 * mcl: collective communication for Mac clusters (Thunderbolt RDMA, TCP,
 * shared memory). The public C API. Its shape follows NCCL so frameworks that
 * speak NCCL can speak mcl with a rename, or through <mcl/nccl_compat.h>
 * (docs/porting-from-nccl.md says what carries over).
 *
 * Conventions:
 *  - Every call returns an mclResult_t. On failure, mclGetLastError() returns
 *    a message naming the argument, rank, peer or link at fault.
 *  - mclInvalidArgument leaves the communicator usable. Any other error on a
 *    communicator is sticky: later calls on it return the same error, and
 *    mclCommGetAsyncError reports it. Destroy or abort the communicator.
 *  - Every operation takes an mclStream_t last. NULL means the call returns
 *    once the operation is complete. A stream from mclStreamCreate runs its
 *    operations in order in the background.
 *  - Every wait is bounded by the communicator's timeout (MCL_TIMEOUT or
 *    mclConfig_t.timeoutSeconds): a peer that stops answering gives
 *    mclTimeout, not a hang.
 */
#ifndef MCL_MCL_H_
#define MCL_MCL_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Versions compare as MCL_VERSION_CODE >= MCL_VERSION(0, 2, 0). mcl's own
 * version is not NCCL's: a program ported from NCCL that guards features
 * with NCCL_VERSION_CODE >= NCCL_VERSION(2, x, y) compares
 * MCL_NCCL_API_CODE instead (see include/mcl/nccl_compat.h, which does it
 * for you, and docs/porting-from-nccl.md). */
#define MCL_MAJOR 0
#define MCL_MINOR 2
#define MCL_PATCH 0
#define MCL_SUFFIX ""
#define MCL_VERSION(X, Y, Z) ((X)*10000 + (Y)*100 + (Z))
#define MCL_VERSION_CODE MCL_VERSION(MCL_MAJOR, MCL_MINOR, MCL_PATCH)

#if defined(_WIN32)
#define MCL_API
#else
#define MCL_API __attribute__((visibility("default")))
#endif

/* In C++ the enums below are as wide as int (a fixed underlying type), as
 * they are in C: a caller may pass any int, and mcl must be able to hold a
 * value it rejects, or an op of mclRedOpCreatePreMulSum, without it being
 * out of the enum's range (undefined behaviour in C++). */
#ifdef __cplusplus
#define MCL_ENUM_INT_ : int
#else
#define MCL_ENUM_INT_
#endif

/* Result codes keep NCCL's numbers. X(name, value, description). Code 1
 * is NCCL's CUDA error: mcl has no devices and never returns it. */
#define MCL_RESULT_MAP(X)                                                   \
  X(Success, 0, "no error")                                                 \
  X(UnhandledDeviceError, 1,                                                \
    "unhandled device error (reserved for NCCL's CUDA errors; mcl never "   \
    "returns it)")                                                          \
  X(SystemError, 2, "system error (a system call or the OS failed)")        \
  X(InternalError, 3, "internal error (a bug in mcl)")                      \
  X(InvalidArgument, 4, "invalid argument")                                 \
  X(InvalidUsage, 5,                                                        \
    "invalid usage (calls in the wrong order or ranks "                     \
    "disagreeing)")                                                         \
  X(RemoteError, 6, "remote error (a peer failed or sent something wrong)") \
  X(InProgress, 7, "operation in progress")                                 \
  X(Timeout, 8, "timed out (a peer stopped answering within the timeout)")

typedef enum MCL_ENUM_INT_ {
#define MCL_RESULT_ENUM_(name, value, text) mcl##name = value,
  MCL_RESULT_MAP(MCL_RESULT_ENUM_)
#undef MCL_RESULT_ENUM_
      mclNumResults = 9
} mclResult_t;

/* Data types keep NCCL's values. Half and 8-bit floats reduce in fp32. */
typedef enum MCL_ENUM_INT_ {
  mclInt8 = 0,
  mclChar = 0,
  mclUint8 = 1,
  mclInt32 = 2,
  mclInt = 2,
  mclUint32 = 3,
  mclInt64 = 4,
  mclUint64 = 5,
  mclFloat16 = 6,
  mclHalf = 6,
  mclFloat32 = 7,
  mclFloat = 7,
  mclFloat64 = 8,
  mclDouble = 8,
  mclBfloat16 = 9,
  mclFloat8e4m3 = 10, /* OCP FP8 E4M3 (no infinities; saturates at 448) */
  mclFloat8e5m2 = 11, /* OCP FP8 E5M2 (IEEE-like, with infinities) */
  mclNumTypes = 12
} mclDataType_t;

typedef enum MCL_ENUM_INT_ {
  mclSum = 0,
  mclProd = 1,
  mclMax = 2,
  mclMin = 3,
  /* Sum, then one division by the number of ranks: integers truncate
   * (C semantics), double divides in fp64, every other float type divides
   * once in fp32 (x / n, not x * (1/n)) and rounds once to its type. */
  mclAvg = 4,
  mclNumOps = 5,
  /* The largest value an op can have (mclRedOpCreatePreMulSum's are
   * between mclNumOps and this); as NCCL's ncclMaxRedOp. */
  mclMaxRedOp = 0x7fffffff
} mclRedOp_t;

/* Where mclRedOpCreatePreMulSum finds its scalar: read from *scalar each
 * time an operation with the op runs (keep it alive and set until then), or
 * copied when the op is created. */
typedef enum MCL_ENUM_INT_ {
  mclScalarDevice = 0,
  mclScalarHostImmediate = 1
} mclScalarResidence_t;

/* The collectives that have a choice of algorithms. */
typedef enum MCL_ENUM_INT_ {
  mclFuncAllReduce = 0,
  mclFuncAllGather = 1,
  mclFuncBroadcast = 2,
  mclFuncReduce = 3,
  mclFuncReduceScatter = 4,
  mclFuncAlltoAll = 5,
  mclNumFuncs = 6
} mclFunc_t;

/* 128 bytes: the root's address and port and a 128-bit random secret. Treat
 * it as a password: whoever holds it can join the communicator. */
#define MCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[MCL_UNIQUE_ID_BYTES];
} mclUniqueId;

/* Size of a buffer that always holds mclUniqueIdToString's output. */
#define MCL_UNIQUE_ID_STRING_BYTES 512

typedef struct mclComm* mclComm_t;
typedef struct mclStream* mclStream_t;
#define MCL_COMM_NULL NULL

/* Per-communicator settings. Start from MCL_CONFIG_INITIALIZER and set what
 * you need; a field left at its initial value takes the environment's value
 * (MCL_TIMEOUT, MCL_TRANSPORT, MCL_ALGO) or the default. A config from an
 * older header (smaller size) is read up to its size. */
#define MCL_CONFIG_UNDEF_INT (-2147483647 - 1)
#define MCL_CONFIG_MAGIC 0x6d636c63u /* "mclc" */
typedef struct {
  size_t size;           /* sizeof(mclConfig_t) */
  unsigned int magic;    /* MCL_CONFIG_MAGIC */
  unsigned int version;  /* MCL_VERSION_CODE */
  int timeoutSeconds;    /* bound on every wait; <= 0 is rejected */
  const char* transport; /* "auto", "shm", "tcp" or "rdma" (MCL_TRANSPORT) */
  const char* commName;  /* shown in log messages */
  /* Algorithms to force, MCL_ALGO's syntax ("allreduce:tree;allgather:ring");
   * NULL: MCL_ALGO. Every rank must force the same. */
  const char* algorithms;
  /* 1: init, split and finalize return once done (the default). 0: they
   * return mclInProgress at once and finish in the background; poll
   * mclCommGetAsyncError until it gives mclSuccess (or the failure) before
   * any other call on the communicator. MCL_COMM_BLOCKING when unset. A
   * split's new communicator inherits the parent's unless its config says. */
  int blocking;
} mclConfig_t;

#define MCL_CONFIG_INITIALIZER                                       \
  {                                                                  \
    sizeof(mclConfig_t), MCL_CONFIG_MAGIC, MCL_VERSION_CODE,         \
        MCL_CONFIG_UNDEF_INT, NULL, NULL, NULL, MCL_CONFIG_UNDEF_INT \
  }

/* Library version as MCL_VERSION_CODE. */
MCL_API mclResult_t mclGetVersion(int* version);

/* The index-th tunable (from 0) mcl reads from the environment: its
 * variable's name, its default value as text, and what it does, as strings
 * that live as long as the process; *name is NULL past the last. The value
 * in effect is the variable's, when set, else the default. */
MCL_API mclResult_t mclGetParam(int index, const char** name,
                                const char** defaultValue, const char** doc);

/* Human-readable name of a result code. Never NULL. */
MCL_API const char* mclGetErrorString(mclResult_t result);

/* The message of the last error returned on the calling thread, naming the
 * argument, rank, peer or link at fault; "" when there was none. Successful
 * calls, mclGetErrorString and mclGetLastError leave it as it is. comm may be
 * NULL. The pointer stays valid until the thread's next failing mcl call. */
MCL_API const char* mclGetLastError(mclComm_t comm);

/* Creates a unique id and starts the rendezvous for it in this process (a
 * background thread listening on the interfaces MCL_SOCKET_IFNAME names or,
 * by default, on loopback, the point-to-point links (Thunderbolt cables) and
 * the first other network; each address bound on its own, never the
 * wildcard; the id carries them all).
 * Call it once per communicator, in one process, and hand the id to every
 * rank (through a file, the environment, MPI, or fork: the id is plain bytes
 * and holds no state of the calling process). That process must keep running
 * until the communicator is built. The listener closes once the communicator
 * is built, or after the timeout (MCL_TIMEOUT) if the ranks do not all come. */
MCL_API mclResult_t mclGetUniqueId(mclUniqueId* uniqueId);

/* "mcl1:<address>:<port>[,<address>:<port>...]:<32 hex digits>" (the root's
 * addresses, then the secret) and back, to pass an id through the
 * environment or a file. buf must hold MCL_UNIQUE_ID_STRING_BYTES. */
MCL_API mclResult_t mclUniqueIdToString(const mclUniqueId* uniqueId, char* buf,
                                        size_t bufSize);
MCL_API mclResult_t mclUniqueIdFromString(const char* str,
                                          mclUniqueId* uniqueId);

/* Collective over nranks processes (or threads): each calls it with its own
 * rank. Inside mclGroupStart/mclGroupEnd the init is deferred to the
 * outermost mclGroupEnd, which runs the group's inits together: one thread
 * may initialise several ranks that way. *comm is set at once; until its
 * init ends, only mclCommGetAsyncError, mclCommDestroy and mclCommAbort
 * take it (others give mclInvalidUsage). A non-blocking config
 * (blocking = 0) returns mclInProgress at once (see mclConfig_t). Bad
 * arguments fail at the call either way. */
MCL_API mclResult_t mclCommInitRank(mclComm_t* comm, int nranks,
                                    mclUniqueId commId, int rank);
MCL_API mclResult_t mclCommInitRankConfig(mclComm_t* comm, int nranks,
                                          mclUniqueId commId, int rank,
                                          mclConfig_t* config);
/* ndev communicators of one process, ranks 0 .. ndev-1 run by threads of
 * this call, each comms[i] rank i; returns once all are built (or all have
 * failed: then every comms[i] is NULL). devlist keeps NCCL's signature:
 * NULL, or ndev distinct values >= 0 (mcl has no devices: unused). */
MCL_API mclResult_t mclCommInitAll(mclComm_t* comms, int ndev,
                                   const int* devlist);

/* Joins a job started by a launcher, from the environment: rank and size
 * from MCL_RANK and MCL_WORLD_SIZE, else Open MPI (OMPI_COMM_WORLD_RANK/SIZE),
 * PMI (PMI_RANK/SIZE), SLURM (SLURM_PROCID/NTASKS), torchrun (RANK,
 * WORLD_SIZE) or mlx.launch (MLX_RANK with MLX_HOSTFILE, MLX_IBV_DEVICES or
 * MLX_WORLD_SIZE); the rendezvous from
 * MCL_UNIQUE_ID, else an address rank 0 listens on: MCL_ROOT=host:port (with
 * MCL_SECRET, 32 hex digits, shared by the ranks), torchrun's MASTER_ADDR
 * and MASTER_PORT+1, MLX_JACCL_COORDINATOR's host and port+1, or, for an
 * mpirun or srun job on one host, a loopback port derived from the job id.
 * A rendezvous other hosts can reach needs MCL_SECRET (else
 * mclInvalidArgument), unless Open MPI's private job key is there. config
 * may be NULL. */
MCL_API mclResult_t mclCommInitFromEnv(mclComm_t* comm, mclConfig_t* config);

/* A reduction op for comm that multiplies each rank's input by *scalar (one
 * element of datatype) and sums: with scalar 1/nranks, an average in the
 * input's precision. Calls with the op must use datatype. The op is a value
 * >= mclNumOps, valid on comm until mclRedOpDestroy. */
MCL_API mclResult_t mclRedOpCreatePreMulSum(mclRedOp_t* op, void* scalar,
                                            mclDataType_t datatype,
                                            mclScalarResidence_t residence,
                                            mclComm_t comm);
MCL_API mclResult_t mclRedOpDestroy(mclRedOp_t op, mclComm_t comm);

/* Collective over comm: the ranks that pass the same color >= 0 form a new
 * communicator, ranked by key (ties by their rank in comm). Ranks passing
 * MCL_SPLIT_NOCOLOR take part but get *newcomm = NULL. config NULL inherits
 * comm's timeout, transport, name, algorithms and blocking; otherwise as
 * for mclCommInitRankConfig. Inside a group, or non-blocking, the split
 * runs at mclGroupEnd or in the background, as an init does, and returns
 * mclSuccess at once (as NCCL's): *newcomm is a handle at once (NULL for
 * MCL_SPLIT_NOCOLOR), and comm takes no other call until the split ends:
 * mclCommGetAsyncError on comm, or on *newcomm, gives mclInProgress until
 * then. */
#define MCL_SPLIT_NOCOLOR (-1)
MCL_API mclResult_t mclCommSplit(mclComm_t comm, int color, int key,
                                 mclComm_t* newcomm, mclConfig_t* config);
/* Waits for the communicator's outstanding operations; after it the
 * communicator takes no new operations. Non-blocking (config), it returns
 * mclInProgress while operations are queued; mclCommGetAsyncError then
 * gives mclInProgress until they are done. */
MCL_API mclResult_t mclCommFinalize(mclComm_t comm);
/* Finalizes if needed and frees the communicator. */
MCL_API mclResult_t mclCommDestroy(mclComm_t comm);
/* Stops every operation on the communicator (from any thread), then frees
 * it. Waiting calls return mclRemoteError. Never waits on peers. */
MCL_API mclResult_t mclCommAbort(mclComm_t comm);
/* The sticky error of the communicator, or mclSuccess; mclInProgress while
 * its init, a non-blocking split of it or a non-blocking finalize is under
 * way. When it reports a failure of an init, mclGetLastError gives the
 * init's message. */
MCL_API mclResult_t mclCommGetAsyncError(mclComm_t comm,
                                         mclResult_t* asyncError);
MCL_API mclResult_t mclCommCount(const mclComm_t comm, int* count);
MCL_API mclResult_t mclCommUserRank(const mclComm_t comm, int* rank);
/* The cluster the communicator was built on, as JSON (the format
 * MCL_TOPO_DUMP_FILE writes): hosts with their ranks, every cable with the
 * interface at both ends, its kind, speed and wire number, the shape, the
 * path each pair of ranks takes, the findings of the cabling checks, and
 * what the transports counted on it ("transport_counters": RDMA's frames
 * received, lost, duplicated, resent and probes sent).
 * *size is the buffer's size in bytes; it is set to the size needed,
 * terminating NUL included. json may be NULL to ask for the size; a buffer
 * that is too small gives mclInvalidArgument and is left untouched. The
 * counters and "memory" move while the communicator works (a background
 * thread services RDMA; collectives may run on another thread), so the
 * text may grow by a few bytes between the two calls: give some room over
 * the size, or ask again. */
MCL_API mclResult_t mclCommGetTopology(const mclComm_t comm, char* json,
                                       size_t* size);
/* The tuner's prediction, in microseconds, of a call of `func` with `count`
 * elements of `type` run with `algorithm` (a name mclGetAlgorithmName
 * gives) on this communicator. mclCommGetTopology's "tuner" object shows
 * the link model behind it. */
MCL_API mclResult_t mclCommPredict(const mclComm_t comm, mclFunc_t func,
                                   const char* algorithm, size_t count,
                                   mclDataType_t type, double* microseconds);
/* The index-th algorithm `func` has (from 0), as MCL_ALGO names it; *name
 * is NULL past the last. */
MCL_API mclResult_t mclGetAlgorithmName(mclFunc_t func, int index,
                                        const char** name);
/* The algorithm a call of `func` with `count` elements of `type` (count as
 * that call takes it) uses on this communicator: the one MCL_ALGO forces,
 * else the tuner's choice; "ring", "tree", "direct", "halving_doubling" or
 * "chain". Every rank gets the same answer. *name is a static string. */
MCL_API mclResult_t mclCommGetAlgorithm(const mclComm_t comm, mclFunc_t func,
                                        size_t count, mclDataType_t type,
                                        const char** name);

/* Memory same-host peers can map. Collectives whose every rank is on one
 * host (over shared memory) and whose buffers all lie in mclMemAlloc memory
 * run in place: each rank reads its peers' inputs and writes their results
 * directly, with no copy through the rings. The decision is made per call,
 * by every rank together: when a buffer the call needs is ordinary memory
 * (broadcast needs only the root's input; all-reduce every rank's input and
 * output), a rank cannot map a peer's memory, or the call is small
 * (MCL_ZERO_COPY_MIN_BYTES), the call runs the usual way. A call that fails
 * after it started in place leaves its buffers undefined, and peers may
 * still be writing them until they fail or abort too.
 * The memory is zero-filled and page-aligned, backed by a named segment
 * (mcl-m<pid>-... in /dev/shm on Linux) whose name goes at mclMemFree or
 * when the process exits normally; a killed process leaves it behind.
 * Peers keep a freed segment mapped until they next map a new one. Memory
 * a forked child inherited counts as ordinary memory in the child. */
MCL_API mclResult_t mclMemAlloc(void** ptr, size_t size);
MCL_API mclResult_t mclMemFree(void* ptr);
/* Registers [buff, buff + size) with the communicator, as NCCL does. While
 * registered, mclMemFree refuses the mclMemAlloc allocation holding it: a
 * guard against freeing memory a stream may still use. Registration is not
 * needed for calls to run in place. Memory from elsewhere (malloc, the
 * stack) may be registered too and changes nothing: calls on it copy
 * through the rings (an INFO line says so). *handle is released by
 * mclCommDeregister or when the communicator is destroyed. */
MCL_API mclResult_t mclCommRegister(const mclComm_t comm, void* buff,
                                    size_t size, void** handle);
MCL_API mclResult_t mclCommDeregister(const mclComm_t comm, void* handle);

/* Collectives. In-place follows NCCL: sendbuff == recvbuff for all-reduce,
 * broadcast and reduce; for all-gather sendbuff == recvbuff + rank * count;
 * for reduce-scatter recvbuff == sendbuff + rank * recvcount (in elements).
 * Buffers that overlap otherwise are rejected. Broadcast reads sendbuff only
 * on the root; reduce writes recvbuff only on the root (other ranks' recvbuff
 * is left untouched and may be NULL). Results are reproducible: for a given
 * communicator size, type, op and count, every rank gets bitwise the same
 * result on every run, as long as the same ranks' buffers are mclMemAlloc
 * memory (a call that runs in place folds the inputs in rank order, which
 * may round differently, or keep the other of two equal operands, than
 * the algorithm it replaces). */
MCL_API mclResult_t mclAllReduce(const void* sendbuff, void* recvbuff,
                                 size_t count, mclDataType_t datatype,
                                 mclRedOp_t op, mclComm_t comm,
                                 mclStream_t stream);
MCL_API mclResult_t mclAllGather(const void* sendbuff, void* recvbuff,
                                 size_t sendcount, mclDataType_t datatype,
                                 mclComm_t comm, mclStream_t stream);
MCL_API mclResult_t mclBroadcast(const void* sendbuff, void* recvbuff,
                                 size_t count, mclDataType_t datatype, int root,
                                 mclComm_t comm, mclStream_t stream);
/* In-place broadcast, NCCL's legacy form: mclBroadcast(buff, buff, ...). */
MCL_API mclResult_t mclBcast(void* buff, size_t count, mclDataType_t datatype,
                             int root, mclComm_t comm, mclStream_t stream);
MCL_API mclResult_t mclReduce(const void* sendbuff, void* recvbuff,
                              size_t count, mclDataType_t datatype,
                              mclRedOp_t op, int root, mclComm_t comm,
                              mclStream_t stream);
MCL_API mclResult_t mclReduceScatter(const void* sendbuff, void* recvbuff,
                                     size_t recvcount, mclDataType_t datatype,
                                     mclRedOp_t op, mclComm_t comm,
                                     mclStream_t stream);
/* Every rank sends block j (count elements) of sendbuff to rank j, and
 * receives rank i's block for it into block i of recvbuff: both buffers hold
 * nranks * count elements. In place (sendbuff == recvbuff) works. */
MCL_API mclResult_t mclAlltoAll(const void* sendbuff, void* recvbuff,
                                size_t count, mclDataType_t datatype,
                                mclComm_t comm, mclStream_t stream);
MCL_API mclResult_t mclBarrier(mclComm_t comm, mclStream_t stream);

/* Point-to-point. Sends to a peer match that peer's receives in order. A
 * rank that both sends to and receives from a peer should put the two in one
 * group (mclGroupStart/mclGroupEnd), or large messages may wait on each other
 * until the timeout. */
MCL_API mclResult_t mclSend(const void* sendbuff, size_t count,
                            mclDataType_t datatype, int peer, mclComm_t comm,
                            mclStream_t stream);
MCL_API mclResult_t mclRecv(void* recvbuff, size_t count,
                            mclDataType_t datatype, int peer, mclComm_t comm,
                            mclStream_t stream);

/* Operations issued between these run together when the outermost
 * mclGroupEnd is reached (groups nest): sends, receives and collectives of
 * one group progress at once and cannot wait on each other. All operations
 * of a group must use the same stream. */
MCL_API mclResult_t mclGroupStart(void);
MCL_API mclResult_t mclGroupEnd(void);

/* Streams: each runs its operations in order on a background thread. On
 * any one communicator, operations run in the order they were issued, across
 * all streams and the NULL stream. */
MCL_API mclResult_t mclStreamCreate(mclStream_t* stream);
/* Waits until every operation queued on the stream is done; returns the
 * first error any of them hit since the last synchronize. */
MCL_API mclResult_t mclStreamSynchronize(mclStream_t stream);
/* mclSuccess when the stream is idle, mclInProgress while it works, or the
 * error one of its operations hit. */
MCL_API mclResult_t mclStreamQuery(mclStream_t stream);
/* Waits for the stream's operations, then frees it. */
MCL_API mclResult_t mclStreamDestroy(mclStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MCL_MCL_H_ */
