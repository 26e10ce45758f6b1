// How an MPI_Allreduce of one datatype and op runs on mcl: as one of mcl's
// own reductions (every type and op MLX sends fast: float16 and bfloat16
// through MLX's recognised user functions, bool as a logical or/and,
// complex64 sums as float pairs), or gathered and folded in rank order here
// (int16 and uint16, complex64 max and min, any other user function), so
// every rank gets the same bytes.
#pragma once

#include <mcl/mcl.h>

#include <cstddef>
#include <string>

#include "datatypes.h"
#include "ops.h"

namespace mcl::mpi {

struct ReducePlan {
  bool native = false;  // on mcl's kernels: type, op and elements below
  mclDataType_t type = mclUint8;
  mclRedOp_t op = mclSum;
  size_t elementsPerItem = 1;  // mcl elements per MPI element
  std::string refusal;         // why neither way takes it ("" if one does)
};

ReducePlan planReduce(const Datatype& type, const Op& op);

// The fold of the gathered way: inout = in (op) inout over `count` MPI
// elements of `type`.
void fold(const Datatype& type, MPI_Datatype handle, const Op& op,
          const void* in, void* inout, int count);

}  // namespace mcl::mpi
