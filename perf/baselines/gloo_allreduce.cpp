// The Gloo side of the side-by-side comparison: gloo::allreduce (the
// function API, ring algorithm) of floats (sum) over Gloo's TCP transport on
// 127.0.0.1, rendezvous through a FileStore, timed like mcl-perf does
// (warm-up, then the average of back-to-back calls, averaged over ranks),
// one line per size: "bytes time_us".
//   gloo_allreduce RANK SIZE STOREDIR MINBYTES MAXBYTES FACTOR ITERS WARMUP
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 9) {
    std::fprintf(stderr,
                 "usage: %s RANK SIZE STOREDIR MINBYTES MAXBYTES FACTOR ITERS "
                 "WARMUP\n",
                 argv[0]);
    return 2;
  }
  int rank = std::atoi(argv[1]);
  int nranks = std::atoi(argv[2]);
  const char* storeDir = argv[3];
  size_t minBytes = std::strtoull(argv[4], nullptr, 10);
  size_t maxBytes = std::strtoull(argv[5], nullptr, 10);
  size_t factor = std::strtoull(argv[6], nullptr, 10);
  int iters = std::atoi(argv[7]);
  int warmup = std::atoi(argv[8]);
  if (nranks < 1 || rank < 0 || rank >= nranks || minBytes < sizeof(float) ||
      factor < 2 || iters < 1 || warmup < 0) {
    std::fprintf(stderr, "%s: bad arguments\n", argv[0]);
    return 2;
  }
  try {
    gloo::transport::tcp::attr attr("127.0.0.1");
    attr.ai_family = AF_INET;
    auto dev = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore store(storeDir);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, nranks);
    ctx->connectFullMesh(store, dev);

    std::vector<float> send(maxBytes / sizeof(float), 0.0f);
    std::vector<float> recv(maxBytes / sizeof(float), 0.0f);
    for (size_t bytes = minBytes; bytes <= maxBytes; bytes *= factor) {
      size_t count = bytes / sizeof(float);
      gloo::AllreduceOptions opts(ctx);
      opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
      opts.setInput(send.data(), count);
      opts.setOutput(recv.data(), count);
      opts.setReduceFunction(
          static_cast<void (*)(void*, const void*, const void*, size_t)>(
              &gloo::sum<float>));
      for (int i = 0; i < warmup; ++i) gloo::allreduce(opts);
      gloo::BarrierOptions barrier(ctx);
      gloo::barrier(barrier);
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) gloo::allreduce(opts);
      std::chrono::duration<double, std::micro> elapsed =
          std::chrono::steady_clock::now() - start;
      double us = elapsed.count() / iters;
      double sum = 0;
      gloo::AllreduceOptions avg(ctx);
      avg.setInput(&us, 1);
      avg.setOutput(&sum, 1);
      avg.setReduceFunction(
          static_cast<void (*)(void*, const void*, const void*, size_t)>(
              &gloo::sum<double>));
      gloo::allreduce(avg);
      if (rank == 0) {
        std::printf("%zu %.2f\n", bytes, sum / nranks);
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: rank %d: %s\n", argv[0], rank, e.what());
    return 1;
  }
  return 0;
}
