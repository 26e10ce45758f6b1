/* The OpenMPI side of the side-by-side comparison: MPI_Allreduce of floats
 * (sum) timed like mcl-perf does (warm-up, then the average of back-to-back
 * calls, averaged over ranks), one line per size: "bytes time_us". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  size_t minBytes = argc > 1 ? strtoull(argv[1], NULL, 10) : 8;
  size_t maxBytes = argc > 2 ? strtoull(argv[2], NULL, 10) : 64 << 20;
  int factor = argc > 3 ? atoi(argv[3]) : 4;
  int iters = argc > 4 ? atoi(argv[4]) : 20;
  int warmup = argc > 5 ? atoi(argv[5]) : 5;
  float* send = malloc(maxBytes);
  float* recv = malloc(maxBytes);
  memset(send, 0, maxBytes);
  memset(recv, 0, maxBytes);
  for (size_t bytes = minBytes; bytes <= maxBytes; bytes *= factor) {
    int count = (int)(bytes / sizeof(float));
    for (int i = 0; i < warmup; ++i)
      MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int i = 0; i < iters; ++i)
      MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double us = (MPI_Wtime() - start) * 1e6 / iters;
    double sum = 0;
    MPI_Allreduce(&us, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%zu %.2f\n", bytes, sum / nranks);
  }
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
