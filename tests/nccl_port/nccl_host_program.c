/*
 * An NCCL host program as people write them (single process, one rank per
 * device, NCCLCHECK, NCCL_VERSION_CODE guards), ported to mcl by changing
 * its include: the test of include/mcl/nccl_compat.h. Built as C and as
 * C++. Usage: mcl-nccl-port-c NRANKS (1 to 8). Prints one line per feature
 * and "PASS: N ranks, K of 8 features"; "FAILED ..." on any error.
 */
#define _POSIX_C_SOURCE 200809L
#include <mcl/nccl_compat.h> /* the port: was #include <nccl.h> */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_DEV 8
#define COUNT 4096

#define NCCLCHECK(cmd)                                                 \
  do {                                                                 \
    ncclResult_t r_ = (cmd);                                           \
    if (r_ != ncclSuccess && r_ != ncclInProgress) {                   \
      printf("FAILED: %s:%d '%s': %s: %s\n", __FILE__, __LINE__, #cmd, \
             ncclGetErrorString(r_), ncclGetLastError(NULL));          \
      exit(EXIT_FAILURE);                                              \
    }                                                                  \
  } while (0)

#define EXPECT(cond, ...)  \
  do {                     \
    if (!(cond)) {         \
      printf("FAILED: ");  \
      printf(__VA_ARGS__); \
      printf("\n");        \
      exit(EXIT_FAILURE);  \
    }                      \
  } while (0)

static int nDev;
static int features;

static void ran(const char* feature) {
  ++features;
  printf("%s: OK\n", feature);
}

/* Polls a non-blocking communicator until it is ready (bounded). */
static void waitReady(ncclComm_t comm) {
  ncclResult_t state = ncclInProgress;
  int i;
  for (i = 0; i < 60000 && state == ncclInProgress; ++i) {
    struct timespec ms = {0, 1000000};
    NCCLCHECK(ncclCommGetAsyncError(comm, &state));
    if (state == ncclInProgress) nanosleep(&ms, NULL);
  }
  EXPECT(state == ncclSuccess, "communicator state %s: %s",
         ncclGetErrorString(state), ncclGetLastError(comm));
}

/* Every rank's all-reduce (sum) of rank + 1, in one group. */
static void allReduceAll(ncclComm_t* comms, int n) {
  static float buf[MAX_DEV][COUNT];
  int i, j;
  NCCLCHECK(ncclGroupStart());
  for (i = 0; i < n; ++i) {
    for (j = 0; j < COUNT; ++j) buf[i][j] = (float)(i + 1);
    NCCLCHECK(ncclAllReduce(buf[i], buf[i], COUNT, ncclFloat, ncclSum, comms[i],
                            NULL));
  }
  NCCLCHECK(ncclGroupEnd());
  for (i = 0; i < n; ++i)
    for (j = 0; j < COUNT; ++j)
      EXPECT(buf[i][j] == (float)(n * (n + 1) / 2),
             "all-reduce: rank %d element %d is %g", i, j, (double)buf[i][j]);
}

int main(int argc, char* argv[]) {
  ncclComm_t comms[MAX_DEV];
  int devs[MAX_DEV];
  int i, j, version = 0;
  nDev = argc > 1 ? atoi(argv[1]) : 2;
  EXPECT(nDev >= 1 && nDev <= MAX_DEV, "usage: %s NRANKS (1 to %d)", argv[0],
         MAX_DEV);

  NCCLCHECK(ncclGetVersion(&version));
  EXPECT(version == NCCL_VERSION_CODE, "ncclGetVersion %d, header %d", version,
         NCCL_VERSION_CODE);
  for (i = 0; i < nDev; ++i) devs[i] = i;
  NCCLCHECK(ncclCommInitAll(comms, nDev, devs));
  for (i = 0; i < nDev; ++i) {
    int rank = -1, count = 0;
    NCCLCHECK(ncclCommUserRank(comms[i], &rank));
    NCCLCHECK(ncclCommCount(comms[i], &count));
    EXPECT(rank == i && count == nDev, "comm %d: rank %d of %d", i, rank,
           count);
  }
  allReduceAll(comms, nDev);
  ran("ncclCommInitAll and ncclAllReduce in a group");

  {
    static int data[MAX_DEV][64];
    NCCLCHECK(ncclGroupStart());
    for (i = 0; i < nDev; ++i) {
      for (j = 0; j < 64; ++j) data[i][j] = i == nDev - 1 ? j * 7 : -1;
      NCCLCHECK(ncclBcast(data[i], 64, ncclInt, nDev - 1, comms[i], NULL));
    }
    NCCLCHECK(ncclGroupEnd());
    for (i = 0; i < nDev; ++i)
      for (j = 0; j < 64; ++j)
        EXPECT(data[i][j] == j * 7, "bcast: rank %d element %d is %d", i, j,
               data[i][j]);
    ran("ncclBcast");
  }

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 7, 0)
  { /* a ring: each rank sends to the next, receives from the previous */
    static double out[MAX_DEV][256], in[MAX_DEV][256];
    NCCLCHECK(ncclGroupStart());
    for (i = 0; i < nDev; ++i) {
      for (j = 0; j < 256; ++j) out[i][j] = i * 1000.0 + j;
      NCCLCHECK(
          ncclSend(out[i], 256, ncclDouble, (i + 1) % nDev, comms[i], NULL));
      NCCLCHECK(ncclRecv(in[i], 256, ncclDouble, (i + nDev - 1) % nDev,
                         comms[i], NULL));
    }
    NCCLCHECK(ncclGroupEnd());
    for (i = 0; i < nDev; ++i)
      for (j = 0; j < 256; ++j)
        EXPECT(in[i][j] == ((i + nDev - 1) % nDev) * 1000.0 + j,
               "sendrecv: rank %d element %d", i, j);
    ran("ncclSend and ncclRecv");
  }
#endif

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 11, 0)
  { /* the average through a pre-multiplied sum */
    static float x[MAX_DEV][COUNT];
    ncclRedOp_t ops[MAX_DEV];
    float scalar = 1.0f / (float)nDev;
    for (i = 0; i < nDev; ++i)
      NCCLCHECK(ncclRedOpCreatePreMulSum(&ops[i], &scalar, ncclFloat,
                                         ncclScalarHostImmediate, comms[i]));
    NCCLCHECK(ncclGroupStart());
    for (i = 0; i < nDev; ++i) {
      EXPECT(ops[i] >= ncclNumOps && ops[i] <= ncclMaxRedOp, "op %d",
             (int)ops[i]);
      for (j = 0; j < COUNT; ++j) x[i][j] = (float)(2 * nDev);
      NCCLCHECK(
          ncclAllReduce(x[i], x[i], COUNT, ncclFloat, ops[i], comms[i], NULL));
    }
    NCCLCHECK(ncclGroupEnd());
    for (i = 0; i < nDev; ++i) {
      EXPECT(x[i][0] > 2.0f * (float)nDev - 0.01f &&
                 x[i][0] < 2.0f * (float)nDev + 0.01f,
             "premulsum: rank %d got %g", i, (double)x[i][0]);
      NCCLCHECK(ncclRedOpDestroy(ops[i], comms[i]));
    }
    ran("ncclRedOpCreatePreMulSum");
  }
#endif

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 14, 0)
  { /* a second clique, non-blocking, every rank from this thread */
    ncclComm_t nb[MAX_DEV];
    ncclUniqueId id;
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    ncclResult_t r;
    config.blocking = 0;
    config.netName = "Socket"; /* NCCL's socket transport: mcl's TCP */
    NCCLCHECK(ncclGetUniqueId(&id));
    NCCLCHECK(ncclGroupStart());
    for (i = 0; i < nDev; ++i)
      NCCLCHECK(ncclCommInitRankConfig(&nb[i], nDev, id, i, &config));
    r = ncclGroupEnd();
    EXPECT(r == ncclSuccess || r == ncclInProgress, "ncclGroupEnd: %s",
           ncclGetErrorString(r));
    for (i = 0; i < nDev; ++i) waitReady(nb[i]);
    allReduceAll(nb, nDev);
    for (i = 0; i < nDev; ++i) {
      NCCLCHECK(ncclCommFinalize(nb[i]));
      waitReady(nb[i]);
      NCCLCHECK(ncclCommDestroy(nb[i]));
    }
    ran("non-blocking ncclCommInitRankConfig in a group");
  }
#endif

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0)
  { /* split by parity, every rank from this thread */
    ncclComm_t sub[MAX_DEV];
    int size[2] = {0, 0};
    NCCLCHECK(ncclGroupStart());
    for (i = 0; i < nDev; ++i)
      NCCLCHECK(ncclCommSplit(comms[i], i % 2, i, &sub[i], NULL));
    NCCLCHECK(ncclGroupEnd());
    for (i = 0; i < nDev; ++i) ++size[i % 2];
    for (i = 0; i < nDev; ++i) {
      int count = 0, rank = -1;
      EXPECT(sub[i] != NCCL_COMM_NULL, "split: rank %d got no comm", i);
      NCCLCHECK(ncclCommCount(sub[i], &count));
      NCCLCHECK(ncclCommUserRank(sub[i], &rank));
      EXPECT(count == size[i % 2] && rank == i / 2,
             "split: rank %d is %d of %d", i, rank, count);
    }
    for (i = 0; i < nDev; ++i) NCCLCHECK(ncclCommDestroy(sub[i]));
    ran("ncclCommSplit in a group");
  }
#endif

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0)
  { /* buffers from ncclMemAlloc, registered */
    float* bufs[MAX_DEV];
    void* handles[MAX_DEV];
    NCCLCHECK(ncclGroupStart());
    for (i = 0; i < nDev; ++i) {
      NCCLCHECK(ncclMemAlloc((void**)&bufs[i], COUNT * sizeof(float)));
      NCCLCHECK(ncclCommRegister(comms[i], bufs[i], COUNT * sizeof(float),
                                 &handles[i]));
      for (j = 0; j < COUNT; ++j) bufs[i][j] = (float)j;
      NCCLCHECK(ncclAllReduce(bufs[i], bufs[i], COUNT, ncclFloat, ncclMax,
                              comms[i], NULL));
    }
    NCCLCHECK(ncclGroupEnd());
    for (i = 0; i < nDev; ++i) {
      EXPECT(bufs[i][COUNT - 1] == (float)(COUNT - 1), "memalloc: rank %d", i);
      NCCLCHECK(ncclCommDeregister(comms[i], handles[i]));
      NCCLCHECK(ncclMemFree(bufs[i]));
    }
    ran("ncclMemAlloc and ncclCommRegister");
  }
#endif

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 14, 0)
  for (i = 0; i < nDev; ++i) NCCLCHECK(ncclCommFinalize(comms[i]));
#endif
  for (i = 0; i < nDev; ++i) NCCLCHECK(ncclCommDestroy(comms[i]));
  ran("ncclCommFinalize and ncclCommDestroy");
  printf("PASS: %d ranks, %d of 8 features\n", nDev, features);
  return 0;
}
