// mcl-mlx-replay: runs MLX's use of its MPI library (mlx_loader.h,
// mlx_calls.h) in N forked ranks on one host, over one transport, and says
// whether every rank saw exactly the reference. Each rank loads the library
// by itself, as an MLX process does; the ranks meet through MCL_UNIQUE_ID
// (this process runs the rendezvous), MCL_RANK and MCL_WORLD_SIZE.
//
//   mcl-mlx-replay --library PATH --np N --transport shm|tcp|rdma
//                  [--fabric JSON] [--scenario SCENARIO] [--limit SECONDS]
//
// calls   every call MLX makes, checked (mlx_calls.h)
// killed  the last rank is killed after MPI_Init; every other rank's next
//         MPI_Allreduce must end its process with status 1 and mcl's
//         message naming the call, never return or hang
// alone   one process without a launcher: a world of one, which gives MLX
//         no group, as Open MPI's does
// misuse  one process, errors returned (MCL_MPI_ERRORS=return): a call
//         before MPI_Init, a handle that is no datatype, op or
//         communicator, a negative count, a rank out of range; each must
//         fail naming the call and the argument (mlx_misuse.h)
// timing  MPI_Allreduce through the library against mclAllReduce on a
//         communicator of mcl's own over the same transport, size by size,
//         alternating, and mlx-lm's decode step both ways (mlx_timing.h);
//         rank 0 prints the table
// soak    mlx-lm's traffic back to back for kSoakRounds rounds: decode
//         rows, prefill all_sums, all_gathers, send/recv of different
//         shapes, each checked (mlx_calls.h); with MCL_EMU_FAULTS, on
//         cables that lose frames
// Exit status 0 when every rank did as expected; each rank's output is
// printed when one did not. A rank still running after --limit seconds
// (default 300) is a hang: every rank is killed and the run fails.
#include <mcl/mcl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "mlx_calls.h"
#include "mlx_loader.h"
#include "mlx_misuse.h"
#include "mlx_timing.h"

namespace {

constexpr int kSoakRounds = 96;

struct Options {
  std::string library;
  int np = 2;
  std::string transport = "shm";
  std::string fabric;
  std::string scenario = "calls";
  int limitSeconds = 300;
};

// One rank: what an MLX process does with the library.
int rankMain(const Options& o, int rank) {
  mlx_replay::Mpi mpi{};
  std::string why;
  if (!mlx_replay::load(mpi, &why)) {
    fprintf(stderr, "rank %d: MLX would not use the library: %s\n", rank,
            why.c_str());
    return 2;
  }
  if (o.scenario == "misuse") {
    const std::string failure = mlx_replay::runMisuse(mpi);
    if (!failure.empty()) fprintf(stderr, "misuse: %s\n", failure.c_str());
    return failure.empty() ? 0 : 1;
  }
  int size = 0;
  const bool group = mlx_replay::start(mpi, &size, &why);
  if (o.scenario == "alone") {
    if (group || size != 1) {
      fprintf(stderr, "alone: a world of %d, a group: %d\n", size, group);
      return 1;
    }
    printf("alone: a world of one, no group (%s)\n", why.c_str());
    return 0;
  }
  if (!group) {
    fprintf(stderr, "rank %d: no group: %s\n", rank, why.c_str());
    return 2;
  }
  if (o.scenario == "killed") {
    if (rank == size - 1) raise(SIGKILL);
    int32_t x = 1;
    for (int i = 0; i < 1000; ++i)
      mpi.allreduce(mcl::mpi::kInPlace, &x, 1, mpi.int32, mpi.sum, mpi.world);
    fprintf(stderr, "rank %d: 1000 all_sums returned with a peer killed\n",
            rank);
    return 3;
  }
  if (o.scenario == "timing") {
    const std::string failure = mlx_replay::runTiming(mpi, rank, size);
    if (!failure.empty())
      fprintf(stderr, "rank %d: %s\n", rank, failure.c_str());
    mpi.finalize();
    return failure.empty() ? 0 : 1;
  }
  if (o.scenario == "soak") {
    long calls = 0;
    const std::string failure =
        mlx_replay::runSoak(mpi, rank, size, kSoakRounds, &calls);
    if (!failure.empty()) {
      fprintf(stderr, "rank %d: soak: %s\n", rank, failure.c_str());
      return 1;
    }
    mpi.finalize();
    printf("rank %d of %d: soak: %ld calls in %d rounds, every result exact\n",
           rank, size, calls, kSoakRounds);
    return 0;
  }
  const std::string failure = mlx_replay::runCalls(mpi, rank, size);
  if (!failure.empty()) {
    fprintf(stderr, "rank %d: %s\n", rank, failure.c_str());
    return 1;
  }
  mpi.finalize();
  printf("rank %d of %d: every call as MLX makes it matched the reference\n",
         rank, size);
  return 0;
}

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--library")
      o->library = value;
    else if (flag == "--np")
      o->np = atoi(value.c_str());
    else if (flag == "--transport")
      o->transport = value;
    else if (flag == "--fabric")
      o->fabric = value;
    else if (flag == "--scenario")
      o->scenario = value;
    else if (flag == "--limit")
      o->limitSeconds = atoi(value.c_str());
    else
      return false;
  }
  return !o->library.empty() && o->np >= 1 && argc % 2 == 1;
}

// Whether rank `rank` ended as the scenario expects; its output says why not.
bool endedWell(const Options& o, int rank, int status, const std::string& err) {
  if (o.scenario != "killed")
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (rank == o.np - 1)
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  return WIFEXITED(status) && WEXITSTATUS(status) == 1 &&
         err.find("MPI_Allreduce") != std::string::npos &&
         err.find("rank") != std::string::npos;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, &o)) {
    fprintf(stderr,
            "usage: mcl-mlx-replay --library PATH [--np N] [--transport "
            "shm|tcp|rdma] [--fabric JSON] [--scenario "
            "calls|killed|alone|misuse|timing|soak] "
            "[--limit SECONDS]\n");
    return 2;
  }
  setenv("MLX_MPI_LIBNAME", o.library.c_str(), 1);
  // The library's rendezvous, and the timing scenario's own communicator's.
  char id[MCL_UNIQUE_ID_STRING_BYTES] = "";
  char direct[MCL_UNIQUE_ID_STRING_BYTES] = "";
  for (char* text : {id, direct}) {
    if (o.scenario == "alone" || o.scenario == "misuse" ||
        (text == direct && o.scenario != "timing"))
      continue;
    mclUniqueId unique;
    if (mclGetUniqueId(&unique) != mclSuccess ||
        mclUniqueIdToString(&unique, text, MCL_UNIQUE_ID_STRING_BYTES) !=
            mclSuccess) {
      fprintf(stderr, "mclGetUniqueId: %s\n", mclGetLastError(nullptr));
      return 2;
    }
  }
  char scratch[] = "/tmp/mcl-mlx-replay-XXXXXX";
  if (mkdtemp(scratch) == nullptr) return 2;
  std::vector<pid_t> pids;
  for (int rank = 0; rank < o.np; ++rank) {
    const pid_t pid = fork();
    if (pid == 0) {
      const std::string log =
          std::string(scratch) + "/rank" + std::to_string(rank);
      freopen((log + ".out").c_str(), "w", stdout);
      freopen((log + ".err").c_str(), "w", stderr);
      if (o.scenario == "misuse") setenv("MCL_MPI_ERRORS", "return", 1);
      if (o.scenario != "alone" && o.scenario != "misuse") {
        setenv("MCL_UNIQUE_ID", id, 1);
        setenv("REPLAY_DIRECT_ID", direct, 1);
        setenv("MCL_RANK", std::to_string(rank).c_str(), 1);
        setenv("MCL_WORLD_SIZE", std::to_string(o.np).c_str(), 1);
        setenv("MCL_TRANSPORT", o.transport.c_str(), 1);
      }
      if (o.transport == "rdma") {
        setenv("MCL_RDMA_PROVIDER", "emu", 1);
        setenv("MCL_EMU_FABRIC", o.fabric.c_str(), 1);
      }
      const int status = rankMain(o, rank);
      fflush(nullptr);  // _exit leaves stdio's buffers unwritten
      _exit(status);
    }
    pids.push_back(pid);
  }
  std::vector<int> statuses(pids.size(), -1);
  size_t running = pids.size();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(o.limitSeconds);
  while (running > 0 && std::chrono::steady_clock::now() < deadline) {
    for (size_t r = 0; r < pids.size(); ++r)
      if (statuses[r] == -1 && waitpid(pids[r], &statuses[r], WNOHANG) > 0)
        --running;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  bool ok = running == 0;
  for (size_t r = 0; r < pids.size(); ++r)
    if (statuses[r] == -1) {
      kill(pids[r], SIGKILL);
      waitpid(pids[r], &statuses[r], 0);
      printf("rank %zu: still running after %d s: a hang\n", r, o.limitSeconds);
    }
  for (int r = 0; r < o.np; ++r) {
    const std::string log = std::string(scratch) + "/rank" + std::to_string(r);
    const std::string out = readAll(log + ".out"), err = readAll(log + ".err");
    const bool well = running == 0 && endedWell(o, r, statuses[size_t(r)], err);
    ok = ok && well;
    printf("== rank %d: %s (status %d) ==\n%s%s", r,
           well ? "as expected" : "NOT as expected", statuses[size_t(r)],
           out.c_str(), err.c_str());
  }
  std::string cleanup = std::string("rm -rf ") + scratch;
  if (system(cleanup.c_str()) != 0) perror("cleanup");
  printf("%s: %s over %s, %d ranks\n", ok ? "PASS" : "FAIL", o.scenario.c_str(),
         o.transport.c_str(), o.np);
  return ok ? 0 : 1;
}
