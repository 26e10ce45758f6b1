/* The OpenMPI side of perf/compare: MPI_Allreduce (float sum) or
 * MPI_Allgather of floats, timed like mcl-perf does (warm-up, then the
 * average of back-to-back calls walking through the buffers, averaged over
 * ranks), one line per size:
 * "bytes time_us". For all-gather, bytes is the whole output, as in
 * mcl-perf (each rank contributes bytes / nranks).
 *   mpi_bench allreduce|allgather MINBYTES MAXBYTES FACTOR ITERS WARMUP
 * Or the decode step of mcl-perf tp: token after token, PER_LAYER in-place
 * all-reduces of BYTES on each layer's buffer, back to back. MPI has no
 * bfloat16: the same bytes as floats (half the count). One line,
 * "BYTES median_us" of the tokens, each token's time the slowest rank's.
 *   mpi_bench tp LAYERS BYTES PER_LAYER TOKENS WARMUP */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compareDoubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static int decodeStep(int rank, int layers, size_t bytes, int perLayer,
                      int tokens, int warmup) {
  const size_t stride = (bytes + 4095) / 4096 * 4096;
  const int count = (int)(bytes / sizeof(float));
  char* storage = aligned_alloc(4096, stride * (size_t)layers);
  float* pattern = malloc(bytes);
  double* times = malloc(sizeof(double) * (size_t)tokens);
  if (!storage || !pattern || !times) return 1;
  for (int i = 0; i < count; ++i) pattern[i] = (float)((i + rank) % 7);
  for (int t = -warmup; t < tokens; ++t) {
    /* Untimed, like the model's compute: the activations to reduce. */
    for (int l = 0; l < layers; ++l)
      memcpy(storage + stride * (size_t)l, pattern, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int l = 0; l < layers; ++l)
      for (int k = 0; k < perLayer; ++k)
        MPI_Allreduce(MPI_IN_PLACE, storage + stride * (size_t)l, count,
                      MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (t >= 0) times[t] = (MPI_Wtime() - start) * 1e6;
  }
  MPI_Allreduce(MPI_IN_PLACE, times, tokens, MPI_DOUBLE, MPI_MAX,
                MPI_COMM_WORLD);
  if (rank == 0) {
    qsort(times, (size_t)tokens, sizeof(double), compareDoubles);
    const double median = tokens % 2
                              ? times[tokens / 2]
                              : (times[tokens / 2 - 1] + times[tokens / 2]) / 2;
    printf("%zu %.3f\n", bytes, median);
    fflush(stdout);
  }
  free(storage);
  free(pattern);
  free(times);
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (argc == 7 && strcmp(argv[1], "tp") == 0) {
    const int layers = atoi(argv[2]);
    const size_t bytes = strtoull(argv[3], NULL, 10);
    const int perLayer = atoi(argv[4]);
    const int tokens = atoi(argv[5]);
    const int warmup = atoi(argv[6]);
    int code = 2;
    if (layers >= 1 && bytes >= sizeof(float) && perLayer >= 1 && tokens >= 1 &&
        warmup >= 0)
      code = decodeStep(rank, layers, bytes, perLayer, tokens, warmup);
    else if (rank == 0)
      fprintf(stderr, "%s tp: bad arguments\n", argv[0]);
    MPI_Finalize();
    return code;
  }
  if (argc != 7 || (strcmp(argv[1], "allreduce") != 0 &&
                    strcmp(argv[1], "allgather") != 0)) {
    if (rank == 0)
      fprintf(stderr,
              "usage: %s allreduce|allgather MINBYTES MAXBYTES FACTOR ITERS "
              "WARMUP\n       %s tp LAYERS BYTES PER_LAYER TOKENS WARMUP\n",
              argv[0], argv[0]);
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
