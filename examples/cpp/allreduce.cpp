// Sums a vector over every rank of a job with mcl.hpp, the C++ layer over
// mcl's C API: the communicator frees itself, failures throw mcl::Error
// (its code and the message naming the rank, peer or link at fault), and
// buffers are containers whose sizes are checked against the job's.
//
// Started like examples/c/allreduce (the environment names the rank, the
// number of ranks and the rendezvous; see mclCommInitFromEnv):
//
//   export MCL_WORLD_SIZE=2 MCL_ROOT=127.0.0.1:29500
//   export MCL_SECRET=$(openssl rand -hex 16)
//   MCL_RANK=0 ./allreduce & MCL_RANK=1 ./allreduce; wait
#include <cstdio>
#include <mcl/mcl.hpp>
#include <vector>

int main() try {
  mcl::Communicator comm = mcl::Communicator::fromEnv();
  const int rank = comm.rank();
  const int nranks = comm.size();

  // In place, on a stream: the call returns at once, synchronize() waits.
  std::vector<float> grad(1 << 20, static_cast<float>(rank + 1));
  mcl::Stream stream;
  comm.allReduce(grad, mclSum, stream);
  stream.synchronize();

  // Every rank's two numbers, in rank order.
  const std::vector<int64_t> mine = {rank, 10 * rank};
  std::vector<int64_t> all(mine.size() * static_cast<size_t>(nranks));
  comm.allGather(mine, all);

  const float want = static_cast<float>(nranks * (nranks + 1) / 2);
  bool right = true;
  for (float v : grad) right &= v == want;
  for (int r = 0; r < nranks; ++r)
    right &= all[2 * r] == r && all[2 * r + 1] == 10 * r;
  std::printf("rank %d of %d: all-reduce of %zu floats and all-gather: %s\n",
              rank, nranks, grad.size(), right ? "right" : "WRONG");
  return right ? 0 : 1;
} catch (const mcl::Error& e) {
  std::fprintf(stderr, "mcl error %d: %s\n", static_cast<int>(e.code()),
               e.what());
  return 1;
}
