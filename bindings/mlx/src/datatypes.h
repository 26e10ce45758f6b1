// The datatypes MLX passes: Open MPI's predefined ones it names, and the
// contiguous types it makes for float16 and bfloat16 (two uint8 each).
#pragma once

#include <cstddef>
#include <string>

#include "mpi_abi.h"

namespace mcl::mpi {

enum class Kind {
  Bool,
  Int8,
  Uint8,
  Int16,
  Uint16,
  Int32,
  Uint32,
  Int64,
  Uint64,
  Float32,
  Float64,
  Complex64,
  Contiguous,  // `count` elements of `base`: MLX's float16 and bfloat16
};

struct Datatype {
  Kind kind;
  size_t bytes;  // of one element
  const char* name;
  int count = 1;                   // Contiguous: elements of base
  const Datatype* base = nullptr;  // Contiguous
  bool committed = true;
};

// The datatype behind a handle; nullptr for one this library never made.
const Datatype* findDatatype(MPI_Datatype handle);
// A new contiguous datatype (not committed yet).
MPI_Datatype makeContiguous(int count, const Datatype& base);
// "MPI_FLOAT", or "a contiguous type of 2 MPI_UINT8_T", for messages.
std::string datatypeText(const Datatype& type);
// The handle's text when it is no datatype: "0x1234 (not a datatype)".
std::string handleText(const void* handle, const char* what);

}  // namespace mcl::mpi
