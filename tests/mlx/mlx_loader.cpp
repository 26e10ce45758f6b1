#include "mlx_loader.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "half_bits.h"
#include "mpi_abi.h"

namespace mlx_replay {

namespace {

using mcl::mpi::bf16ToFloat;
using mcl::mpi::floatToBf16;
using mcl::mpi::floatToHalf;
using mcl::mpi::halfToFloat;

// MLX's user functions: acc[i] = acc[i] OP in[i], in float, rounded back.
template <uint16_t (*Encode)(float), float (*Decode)(uint16_t), int Kind>
void halfOp(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<uint16_t*>(in);
  auto* acc = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    const float x = Decode(a[i]);
    const float y = Decode(acc[i]);
    const float r = Kind == 0   ? y + x
                    : Kind == 1 ? (y < x ? x : y)
                                : (x < y ? x : y);
    acc[i] = Encode(r);
  }
}

// complex64: ordered by real part, then imaginary (MLX's operator<).
template <int Kind>
void complexOp(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<float*>(in);
  auto* acc = static_cast<float*>(inout);
  for (int i = 0; i < *len; ++i) {
    const float xr = a[2 * i], xi = a[2 * i + 1];
    const float yr = acc[2 * i], yi = acc[2 * i + 1];
    const bool yLess = yr < xr || (yr == xr && yi < xi);
    const bool xLess = xr < yr || (xr == yr && xi < yi);
    if ((Kind == 1 && yLess) || (Kind == 2 && xLess)) {
      acc[2 * i] = xr;
      acc[2 * i + 1] = xi;
    }
  }
}

template <typename T>
bool symbol(void* library, const char* name, T* out, std::string* why) {
  *out = reinterpret_cast<T>(dlsym(library, name));
  if (dlerror() != nullptr) {
    *why = std::string("no symbol ") + name;
    return false;
  }
  return true;
}

}  // namespace

bool load(Mpi& m, std::string* why) {
  const char* name = getenv("MLX_MPI_LIBNAME");
  void* library =
      dlopen(name != nullptr ? name : "libmpi.so", RTLD_NOW | RTLD_GLOBAL);
  if (library == nullptr) {
    *why = std::string("dlopen: ") + dlerror();
    return false;
  }
  bool ok =
      symbol(library, "MPI_Get_library_version", &m.get_library_version, why);
  if (!ok) return false;
  char version[mcl::mpi::kMaxVersionText];
  int length = 0;
  m.get_library_version(version, &length);
  if (std::string_view(version, size_t(length)).find("Open MPI") ==
      std::string_view::npos) {
    *why = "MLX requires Open MPI but this is " +
           std::string(version, size_t(length));
    return false;
  }
  ok = symbol(library, "MPI_Init", &m.init, why) &&
       symbol(library, "MPI_Finalize", &m.finalize, why) &&
       symbol(library, "MPI_Comm_rank", &m.comm_rank, why) &&
       symbol(library, "MPI_Comm_size", &m.comm_size, why) &&
       symbol(library, "MPI_Comm_split", &m.comm_split, why) &&
       symbol(library, "MPI_Comm_free", &m.comm_free, why) &&
       symbol(library, "MPI_Allreduce", &m.allreduce, why) &&
       symbol(library, "MPI_Allgather", &m.allgather, why) &&
       symbol(library, "MPI_Send", &m.send, why) &&
       symbol(library, "MPI_Recv", &m.recv, why) &&
       symbol(library, "MPI_Type_contiguous", &m.type_contiguous, why) &&
       symbol(library, "MPI_Type_commit", &m.type_commit, why) &&
       symbol(library, "MPI_Op_create", &m.op_create, why) &&
       symbol(library, "ompi_mpi_comm_world", &m.world, why) &&
       symbol(library, "ompi_mpi_op_sum", &m.sum, why) &&
       symbol(library, "ompi_mpi_op_max", &m.max, why) &&
       symbol(library, "ompi_mpi_op_min", &m.min, why) &&
       symbol(library, "ompi_mpi_c_bool", &m.boolean, why) &&
       symbol(library, "ompi_mpi_int8_t", &m.int8, why) &&
       symbol(library, "ompi_mpi_uint8_t", &m.uint8, why) &&
       symbol(library, "ompi_mpi_int16_t", &m.int16, why) &&
       symbol(library, "ompi_mpi_uint16_t", &m.uint16, why) &&
       symbol(library, "ompi_mpi_int32_t", &m.int32, why) &&
       symbol(library, "ompi_mpi_uint32_t", &m.uint32, why) &&
       symbol(library, "ompi_mpi_int64_t", &m.int64, why) &&
       symbol(library, "ompi_mpi_uint64_t", &m.uint64, why) &&
       symbol(library, "ompi_mpi_float", &m.float32, why) &&
       symbol(library, "ompi_mpi_double", &m.float64, why) &&
       symbol(library, "ompi_mpi_c_complex", &m.complex64, why);
  return ok;
}

bool start(Mpi& m, int* size, std::string* why) {
  if (m.init(nullptr, nullptr) != mcl::mpi::kSuccess) {
    *why = "Cannot initialize MPI";
    return false;
  }
  m.type_contiguous(2, m.uint8, &m.float16);
  m.type_commit(&m.float16);
  m.type_contiguous(2, m.uint8, &m.bfloat16);
  m.type_commit(&m.bfloat16);
  m.op_create(&halfOp<floatToHalf, halfToFloat, 0>, 1, &m.sumF16);
  m.op_create(&halfOp<floatToBf16, bf16ToFloat, 0>, 1, &m.sumBf16);
  m.op_create(&halfOp<floatToHalf, halfToFloat, 1>, 1, &m.maxF16);
  m.op_create(&halfOp<floatToBf16, bf16ToFloat, 1>, 1, &m.maxBf16);
  m.op_create(&complexOp<1>, 1, &m.maxC64);
  m.op_create(&halfOp<floatToHalf, halfToFloat, 2>, 1, &m.minF16);
  m.op_create(&halfOp<floatToBf16, bf16ToFloat, 2>, 1, &m.minBf16);
  m.op_create(&complexOp<2>, 1, &m.minC64);
  *size = 1;
  m.comm_size(m.world, size);
  if (*size <= 1) {
    *why = "The world has a single process";
    return false;
  }
  return true;
}

}  // namespace mlx_replay
