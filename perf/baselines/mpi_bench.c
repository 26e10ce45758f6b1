/* The OpenMPI side of perf/compare: MPI_Allreduce (float sum) or
 * MPI_Allgather of floats, timed like mcl-perf does (warm-up, then the
 * average of back-to-back calls walking through the buffers, averaged over
 * ranks), one line per size:
 * "bytes time_us". For all-gather, bytes is the whole output, as in
 * mcl-perf (each rank contributes bytes / nranks).
 *   mpi_bench allreduce|allgather MINBYTES MAXBYTES FACTOR ITERS WARMUP */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (argc != 7 || (strcmp(argv[1], "allreduce") != 0 &&
                    strcmp(argv[1], "allgather") != 0)) {
    if (rank == 0)
      fprintf(stderr,
              "usage: %s allreduce|allgather MINBYTES MAXBYTES FACTOR ITERS "
              "WARMUP\n",
              argv[0]);
    MPI_Finalize();
    return 2;
  }
  const int gather = strcmp(argv[1], "allgather") == 0;
  size_t minBytes = strtoull(argv[2], NULL, 10);
  size_t maxBytes = strtoull(argv[3], NULL, 10);
  size_t factor = strtoull(argv[4], NULL, 10);
  int iters = atoi(argv[5]);
  int warmup = atoi(argv[6]);
  if (factor < 2 || iters < 1 || warmup < 0 || minBytes < sizeof(float)) {
    if (rank == 0) fprintf(stderr, "%s: bad arguments\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  float* send = malloc(maxBytes);
  float* recv = malloc(maxBytes);
  memset(send, 0, maxBytes);
  memset(recv, 0, maxBytes);
  for (size_t bytes = minBytes; bytes <= maxBytes; bytes *= factor) {
    int count = (int)(bytes / sizeof(float));
    int part = count / nranks; /* all-gather: each rank's share */
    /* Like mcl-perf (and nccl-tests), call i works at offset
     * bytes * (i % slots) of the buffers, so small sizes do not always hit
     * the same cache lines. */
    size_t slots = maxBytes / bytes;
    double start = 0;
    for (int i = 0; i < warmup + iters; ++i) {
      if (i == warmup) {
        MPI_Barrier(MPI_COMM_WORLD);
        start = MPI_Wtime();
      }
      size_t shift = bytes * ((size_t)i % slots);
      float* in = (float*)((char*)send + shift);
      float* out = (float*)((char*)recv + shift);
      if (gather)
        MPI_Allgather(in, part, MPI_FLOAT, out, part, MPI_FLOAT,
                      MPI_COMM_WORLD);
      else
        MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    double us = (MPI_Wtime() - start) * 1e6 / iters;
    double sum = 0;
    MPI_Allreduce(&us, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
      printf("%zu %.3f\n", bytes, sum / nranks);
      fflush(stdout);
    }
  }
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
