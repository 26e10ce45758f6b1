/* The limits perf/compare holds mcl's TCP all-reduces to: what one TCP
 * loopback socket does with nothing above it. Two processes (fork), one
 * connection, TCP_NODELAY, non-blocking calls polled in a busy loop (the
 * fastest a process notices data; a blocking read adds a wake-up).
 *   pingpong: rank 0 sends BYTES, rank 1 sends them back; the round trip.
 *   exchange: both send BYTES to the other at once and receive the other's,
 *             reading while they write (the socket buffers never stall
 *             both); what moving a 2-rank all-reduce's bytes costs at least.
 * One line per size, "bytes us", the average of ITERS after WARMUP.
 *   tcp_limits pingpong|exchange MINBYTES MAXBYTES FACTOR ITERS WARMUP */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if !defined(MSG_NOSIGNAL)
#define MSG_NOSIGNAL 0
#endif

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* One non-blocking step of moving *left bytes at *p: 0, or -1 when the
 * connection broke. */
static int step(int fd, char** p, size_t* left, int sending) {
  if (*left == 0) return 0;
  ssize_t k = sending ? send(fd, *p, *left, MSG_DONTWAIT | MSG_NOSIGNAL)
                      : recv(fd, *p, *left, MSG_DONTWAIT);
  if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    return 0;
  if (k <= 0) return -1;
  *p += k;
  *left -= (size_t)k;
  return 0;
}

/* Sends `out` and receives into `in` (either may be 0 bytes), both at
 * once. */
static int move(int fd, char* out, size_t outBytes, char* in, size_t inBytes) {
  while (outBytes || inBytes)
    if (step(fd, &out, &outBytes, 1) || step(fd, &in, &inBytes, 0)) return -1;
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 7 ||
      (strcmp(argv[1], "pingpong") != 0 && strcmp(argv[1], "exchange") != 0)) {
    fprintf(stderr,
            "usage: %s pingpong|exchange MINBYTES MAXBYTES FACTOR ITERS "
            "WARMUP\n",
            argv[0]);
    return 2;
  }
  const int exchange = strcmp(argv[1], "exchange") == 0;
  const size_t lo = strtoull(argv[2], NULL, 10);
  const size_t hi = strtoull(argv[3], NULL, 10);
  const size_t factor = strtoull(argv[4], NULL, 10);
  const int iters = atoi(argv[5]), warmup = atoi(argv[6]);
  if (lo < 1 || hi < lo || factor < 2 || iters < 1 || warmup < 0) {
    fprintf(stderr, "%s: bad arguments\n", argv[0]);
    return 2;
  }
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (listener < 0 || bind(listener, (struct sockaddr*)&addr, len) != 0 ||
      listen(listener, 1) != 0 ||
      getsockname(listener, (struct sockaddr*)&addr, &len) != 0) {
    perror("tcp_limits: listen on loopback");
    return 1;
  }
  char* out = malloc(hi);
  char* in = malloc(hi);
  if (!out || !in) return 1;
  memset(out, 1, hi);
  memset(in, 0, hi);
  const pid_t child = fork();
  if (child < 0) {
    perror("tcp_limits: fork");
    return 1;
  }
  int fd;
  if (child == 0) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr*)&addr, len) != 0) _exit(1);
  } else {
    fd = accept(listener, NULL, NULL);
  }
  close(listener);
  int one = 1;
  if (fd < 0 || setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one)) {
    perror("tcp_limits: connect");
    return 1;
  }
  int failed = 0;
  for (size_t bytes = lo; bytes <= hi && !failed; bytes *= factor) {
    double start = 0;
    for (int i = 0; i < warmup + iters && !failed; ++i) {
      if (i == warmup) start = now_us();
      if (exchange)
        failed = move(fd, out, bytes, in, bytes);
      else if (child != 0)
        failed = move(fd, out, bytes, in, 0) || move(fd, out, 0, in, bytes);
      else
        failed = move(fd, out, 0, in, bytes) || move(fd, out, bytes, in, 0);
    }
    if (child != 0 && !failed) {
      printf("%zu %.3f\n", bytes, (now_us() - start) / iters);
      fflush(stdout);
    }
  }
  close(fd);
  if (child == 0) _exit(failed);
  int status = 0;
  waitpid(child, &status, 0);
  if (failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "tcp_limits: the connection failed\n");
    return 1;
  }
  return 0;
}
