// A decode step as MLX's mpi backend runs it (mlx/distributed/mpi/mpi.cpp),
// on whichever library MLX_MPI_LIBNAME names: Open MPI's libmpi (what MLX
// users run today) or mcl's libmcl_mpi. The library is opened and used as
// MLX does: dlopen with RTLD_NOW | RTLD_GLOBAL, the "Open MPI" version
// check, MPI_Init(NULL, NULL), bfloat16 as MPI_Type_contiguous(2, uint8)
// with MLX's user function (float math, rounded to nearest even), every
// all_sum in place. Started by mpirun, one process per rank.
//
//   mlx_decode LAYERS HIDDEN PER_LAYER TOKENS WARMUP
//
// Rank 0 prints "<bytes per all_sum> <median us per token>".
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

typedef void* Handle;
typedef void(UserFunction)(void*, void*, int*, Handle*);

float bf16ToFloat(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += ((u >> 16) & 1) + 0x7fff;
  return uint16_t(u >> 16);
}

// MLX's op_sum_bf16: acc[i] += in[i].
void sumBf16(void* in, void* inout, int* len, Handle*) {
  auto* a = static_cast<uint16_t*>(in);
  auto* acc = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i)
    acc[i] = floatToBf16(bf16ToFloat(acc[i]) + bf16ToFloat(a[i]));
}

template <typename T>
T symbol(void* library, const char* name) {
  void* p = dlsym(library, name);
  if (p == nullptr) {
    fprintf(stderr, "mlx_decode: no %s in %s\n", name,
            getenv("MLX_MPI_LIBNAME"));
    exit(2);
  }
  return reinterpret_cast<T>(p);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr,
            "usage: mlx_decode LAYERS HIDDEN PER_LAYER TOKENS WARMUP\n");
    return 2;
  }
  const int calls = atoi(argv[1]) * atoi(argv[3]);
  const int hidden = atoi(argv[2]), tokens = atoi(argv[4]),
            warmup = atoi(argv[5]);
  const char* name = getenv("MLX_MPI_LIBNAME");
  void* library = dlopen(name ? name : "libmpi.so", RTLD_NOW | RTLD_GLOBAL);
  if (library == nullptr) {
    fprintf(stderr, "mlx_decode: %s\n", dlerror());
    return 2;
  }
  char version[256];
  int length = 0;
  symbol<int (*)(char*, int*)>(library, "MPI_Get_library_version")(version,
                                                                   &length);
  if (std::string(version, size_t(length)).find("Open MPI") ==
      std::string::npos) {
    fprintf(stderr, "mlx_decode: MLX would refuse %s\n", name);
    return 2;
  }
  auto init = symbol<int (*)(int*, char***)>(library, "MPI_Init");
  auto finalize = symbol<int (*)()>(library, "MPI_Finalize");
  auto rankOf = symbol<int (*)(Handle, int*)>(library, "MPI_Comm_rank");
  auto contiguous =
      symbol<int (*)(int, Handle, Handle*)>(library, "MPI_Type_contiguous");
  auto commit = symbol<int (*)(Handle*)>(library, "MPI_Type_commit");
  auto opCreate =
      symbol<int (*)(UserFunction*, int, Handle*)>(library, "MPI_Op_create");
  auto allreduce =
      symbol<int (*)(const void*, void*, int, Handle, Handle, Handle)>(
          library, "MPI_Allreduce");
  Handle world = symbol<Handle>(library, "ompi_mpi_comm_world");
  Handle uint8 = symbol<Handle>(library, "ompi_mpi_uint8_t");
  if (init(nullptr, nullptr) != 0) return 2;
  int rank = 0;
  rankOf(world, &rank);
  Handle bf16 = nullptr, sum = nullptr;
  contiguous(2, uint8, &bf16);
  commit(&bf16);
  opCreate(&sumBf16, 1, &sum);
  std::vector<uint16_t> row(size_t(hidden), floatToBf16(0.5f));
  std::vector<double> perToken;
  for (int t = 0; t < warmup + tokens; ++t) {
    std::fill(row.begin(), row.end(), floatToBf16(0.5f));
    const auto start = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c)  // MPI_IN_PLACE, as MLX passes it
      allreduce(reinterpret_cast<void*>(1), row.data(), hidden, bf16, sum,
                world);
    const double us = std::chrono::duration<double, std::micro>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    if (t >= warmup) perToken.push_back(us);
  }
  std::sort(perToken.begin(), perToken.end());
  if (rank == 0) printf("%d %.1f\n", hidden * 2, perToken[perToken.size() / 2]);
  finalize();
  return 0;
}
