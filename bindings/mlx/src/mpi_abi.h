// The part of Open MPI's ABI that MLX's mpi backend compiles in
// (mlx/distributed/mpi/mpi_declarations.h): handles are plain pointers, a
// predefined one the address of an exported object (ompi_mpi_float, ...);
// the constants are MLX's macros, so these values are fixed.
#pragma once

#include <cstddef>

extern "C" {

typedef void* MPI_Comm;
typedef void* MPI_Datatype;
typedef void* MPI_Op;
typedef void(MPI_User_function)(void* invec, void* inoutvec, int* len,
                                MPI_Datatype* datatype);

// Open MPI's public status: what MPI_Recv fills (MLX never reads it).
typedef struct ompi_status_public_t {
  int MPI_SOURCE;
  int MPI_TAG;
  int MPI_ERROR;
  int _cancelled;
  size_t _ucount;
} MPI_Status;

}  // extern "C"

namespace mcl::mpi {

constexpr int kSuccess = 0;           // MPI_SUCCESS
constexpr int kAnySource = -1;        // MPI_ANY_SOURCE
constexpr int kAnyTag = -1;           // MPI_ANY_TAG
constexpr int kMaxVersionText = 256;  // MPI_MAX_LIBRARY_VERSION_STRING
// Open MPI's error classes this library returns when errors are not fatal
// (MCL_MPI_ERRORS=return).
constexpr int kErrBuffer = 1;   // MPI_ERR_BUFFER
constexpr int kErrCount = 2;    // MPI_ERR_COUNT
constexpr int kErrType = 3;     // MPI_ERR_TYPE
constexpr int kErrTag = 4;      // MPI_ERR_TAG
constexpr int kErrComm = 5;     // MPI_ERR_COMM
constexpr int kErrRank = 6;     // MPI_ERR_RANK
constexpr int kErrOp = 9;       // MPI_ERR_OP
constexpr int kErrArg = 13;     // MPI_ERR_ARG
constexpr int kErrOther = 16;   // MPI_ERR_OTHER
constexpr int kErrIntern = 17;  // MPI_ERR_INTERN

inline void* const kInPlace = reinterpret_cast<void*>(1);  // MPI_IN_PLACE

}  // namespace mcl::mpi
