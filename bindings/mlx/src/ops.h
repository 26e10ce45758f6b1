// The reduction ops MLX passes: MPI_SUM, MPI_MAX and MPI_MIN, and the user
// functions it makes with MPI_Op_create (float16 and bfloat16 sum, max and
// min; complex64 max and min). Each user function is probed once when made:
// MLX's float16 and bfloat16 ones are recognised by what they compute and
// run on mcl's kernels; any other runs as given.
#pragma once

#include <mutex>
#include <string>

#include "mpi_abi.h"

namespace mcl::mpi {

enum class Builtin { Sum, Max, Min, None };
enum class HalfKind { None, Float16, Bfloat16 };

struct Op {
  Op() = default;
  Op(Builtin b, const char* n) : builtin(b), name(n) {}
  Builtin builtin = Builtin::None;  // MPI's own op; None for a user function
  MPI_User_function* function = nullptr;  // a user op's
  bool commute = true;
  const char* name = "";
  // A user function run on 2-byte elements is probed once, on its first
  // such call, for what MLX's float16 and bfloat16 functions compute.
  mutable std::once_flag probed;
  mutable HalfKind recognised = HalfKind::None;
  mutable Builtin computes = Builtin::None;
};

// The op behind a handle; nullptr for one this library never made.
const Op* findOp(MPI_Op handle);
MPI_Op createOp(MPI_User_function* function, bool commute);
// For a user function called on 2-byte elements: which of MLX's float16 or
// bfloat16 functions it is (HalfKind::None: none), probing it once.
HalfKind recogniseOnHalves(const Op& op);
std::string opText(const Op& op);

}  // namespace mcl::mpi
