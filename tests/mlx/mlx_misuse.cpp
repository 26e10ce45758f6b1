#include "mlx_misuse.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "mpi_abi.h"

namespace mlx_replay {

namespace {

// What `call` wrote to stderr (redirected to a file meanwhile) and returned.
std::string captured(const std::function<int()>& call, int* status) {
  char path[] = "/tmp/mcl-mlx-misuse-XXXXXX";
  const int fd = mkstemp(path);
  fflush(stderr);
  const int saved = dup(2);
  dup2(fd, 2);
  *status = call();
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  unlink(path);
  return text.str();
}

struct Case {
  const char* what;
  std::function<int()> call;
  int wantClass;
  std::vector<const char*> named;  // what the message must name
};

}  // namespace

std::string runMisuse(Mpi& m) {
  int32_t x = 1;
  int notAHandle = 0;
  std::vector<Case> before = {
      {"a call before MPI_Init",
       [&] { return m.allreduce(&x, &x, 1, m.int32, m.sum, m.world); },
       mcl::mpi::kErrOther,
       {"MPI_Allreduce", "before MPI_Init"}},
  };
  std::vector<Case> after = {
      {"a datatype handle that is none",
       [&] { return m.allreduce(&x, &x, 1, &notAHandle, m.sum, m.world); },
       mcl::mpi::kErrType,
       {"MPI_Allreduce", "datatype", "not a datatype"}},
      {"an op handle that is none",
       [&] { return m.allreduce(&x, &x, 1, m.int32, &notAHandle, m.world); },
       mcl::mpi::kErrOp,
       {"MPI_Allreduce", "op", "not an op"}},
      {"a communicator handle that is none",
       [&] { return m.allreduce(&x, &x, 1, m.int32, m.sum, &notAHandle); },
       mcl::mpi::kErrComm,
       {"MPI_Allreduce", "comm", "not a communicator"}},
      {"a negative count (an array of 2^31 elements narrowed to int)",
       [&] { return m.allgather(&x, -5, m.int32, &x, -5, m.int32, m.world); },
       mcl::mpi::kErrCount,
       {"MPI_Allgather", "recvcount -5"}},
      {"a destination out of range",
       [&] { return m.send(&x, 1, m.int32, 3, 0, m.world); },
       mcl::mpi::kErrRank,
       {"MPI_Send", "dest 3"}},
      {"an uncommitted contiguous type",
       [&] {
         MPI_Datatype loose = nullptr;
         m.type_contiguous(4, m.uint8, &loose);
         return m.allreduce(&x, &x, 1, loose, m.sum, m.world);
       },
       mcl::mpi::kErrType,
       {"MPI_Allreduce", "not committed"}},
  };
  auto check = [](const Case& c) -> std::string {
    int status = 0;
    const std::string text = captured(c.call, &status);
    if (status != c.wantClass)
      return std::string(c.what) + ": returned " + std::to_string(status) +
             ", expected " + std::to_string(c.wantClass);
    for (const char* word : c.named)
      if (text.find(word) == std::string::npos)
        return std::string(c.what) + ": the message does not name '" + word +
               "': " + text;
    return "";
  };
  for (const Case& c : before)
    if (std::string failure = check(c); !failure.empty()) return failure;
  if (m.init(nullptr, nullptr) != mcl::mpi::kSuccess) return "MPI_Init failed";
  for (const Case& c : after)
    if (std::string failure = check(c); !failure.empty()) return failure;
  m.finalize();
  printf(
      "misuse: %zu kinds of bad use each refused, naming the call and "
      "the argument\n",
      before.size() + after.size());
  return "";
}

}  // namespace mlx_replay
