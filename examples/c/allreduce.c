/* Sums a vector over every rank of a job with mcl's C API.
 *
 * The rank, the number of ranks and the rendezvous come from the
 * environment (mclCommInitFromEnv): MCL_RANK, MCL_WORLD_SIZE, MCL_ROOT
 * (host:port rank 0 listens on) and MCL_SECRET (32 hex digits), or what
 * torchrun, mpirun, srun or mlx.launch set. Two ranks on one Mac:
 *
 *   export MCL_WORLD_SIZE=2 MCL_ROOT=127.0.0.1:29500 \
 *          MCL_SECRET=$(openssl rand -hex 16)
 *   MCL_RANK=0 ./allreduce & MCL_RANK=1 ./allreduce; wait
 */
#include <mcl/mcl.h>
#include <stdio.h>
#include <stdlib.h>

/* Prints what failed and why (mclGetLastError names the argument, rank,
 * peer or link), and leaves. */
static int fail(const char* call, mclResult_t result, mclComm_t comm) {
  fprintf(stderr, "%s: %s (%s)\n", call, mclGetErrorString(result),
          mclGetLastError(comm));
  if (comm != NULL) mclCommAbort(comm);
  return 1;
}

int main(void) {
  mclComm_t comm = NULL;
  mclResult_t r = mclCommInitFromEnv(&comm, NULL);
  if (r != mclSuccess) return fail("mclCommInitFromEnv", r, NULL);
  int rank = 0, nranks = 0;
  mclCommUserRank(comm, &rank);
  mclCommCount(comm, &nranks);

  const size_t count = (size_t)1 << 20;
  float* data = malloc(count * sizeof(float));
  if (data == NULL) return fail("malloc", mclSystemError, comm);
  for (size_t i = 0; i < count; ++i) data[i] = (float)(rank + 1);

  r = mclAllReduce(data, data, count, mclFloat32, mclSum, comm, NULL);
  if (r != mclSuccess) return fail("mclAllReduce", r, comm);

  const float want = (float)nranks * (float)(nranks + 1) / 2.0f;
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) wrong += data[i] != want;
  printf("rank %d of %d: all-reduce of %zu floats: %s (each %g)\n", rank,
         nranks, count, wrong == 0 ? "right" : "WRONG", (double)data[0]);
  free(data);
  r = mclCommDestroy(comm);
  if (r != mclSuccess) return fail("mclCommDestroy", r, NULL);
  return wrong == 0 ? 0 : 1;
}
