// MLX's mpi backend, replayed (mlx/distributed/mpi/mpi.cpp): the library
// MLX_MPI_LIBNAME names opened with RTLD_NOW | RTLD_GLOBAL, the same 14
// functions and 16 objects looked up in the same order (a missing one turns
// the backend off), the same "Open MPI" check of the version before
// MPI_Init, then MPI_Init(NULL, NULL), the two contiguous types and the
// eight user ops MLX makes. What MLX does with them is in mlx_calls.h.
#pragma once

#include <string>

#include "mpi_abi.h"

namespace mlx_replay {

struct Mpi {
  int (*get_library_version)(char*, int*);
  int (*init)(int*, char***);
  int (*finalize)();
  int (*comm_rank)(MPI_Comm, int*);
  int (*comm_size)(MPI_Comm, int*);
  int (*comm_split)(MPI_Comm, int, int, MPI_Comm*);
  int (*comm_free)(MPI_Comm*);
  int (*allreduce)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
  int (*allgather)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype,
                   MPI_Comm);
  int (*send)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
  int (*recv)(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status*);
  int (*type_contiguous)(int, MPI_Datatype, MPI_Datatype*);
  int (*type_commit)(MPI_Datatype*);
  int (*op_create)(MPI_User_function*, int, MPI_Op*);
  MPI_Comm world;
  MPI_Op sum, max, min;
  MPI_Datatype boolean, int8, uint8, int16, uint16, int32, uint32, int64,
      uint64, float32, float64, complex64;
  // Made after MPI_Init, as MLX makes them.
  MPI_Datatype float16 = nullptr, bfloat16 = nullptr;
  MPI_Op sumF16, sumBf16, maxF16, maxBf16, maxC64, minF16, minBf16, minC64;
};

// Opens and checks the library as MLX does; false with *why when MLX would
// turn its backend off.
bool load(Mpi& mpi, std::string* why);
// MPI_Init, the world's size, and the types and ops MLX makes after it;
// false with *why when MLX would give no group (*why says which).
bool start(Mpi& mpi, int* size, std::string* why);

}  // namespace mlx_replay
