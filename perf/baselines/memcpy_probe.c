/* One thread's memcpy bandwidth past the caches, the machine's own limit
 * that perf/compare sets mcl's large all-reduce against: the best of a few
 * 64 MiB copies, printed as GB/s (1e9 bytes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void) {
  const size_t bytes = (size_t)64 << 20;
  char* src = malloc(bytes);
  char* dst = malloc(bytes);
  if (!src || !dst) return 1;
  memset(src, 1, bytes);
  memset(dst, 0, bytes);
  double best = 1e30;
  for (int i = 0; i < 8; ++i) {
    double start = now();
    memcpy(dst, src, bytes);
    double took = now() - start;
    if (took < best) best = took;
  }
  printf("%.3f\n", (double)bytes / best / 1e9 + (dst[bytes / 2] - 1));
  free(src);
  free(dst);
  return 0;
}
