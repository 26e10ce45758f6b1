#include "reduce_plan.h"

#include <mcl/mcl.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "datatypes.h"
#include "mpi_abi.h"
#include "ops.h"

namespace mcl::mpi {

namespace {

mclRedOp_t mclOp(Builtin b) {
  return b == Builtin::Max ? mclMax : b == Builtin::Min ? mclMin : mclSum;
}

bool nativeType(Kind kind, mclDataType_t* out) {
  switch (kind) {
    case Kind::Int8:
      *out = mclInt8;
      return true;
    case Kind::Uint8:
      *out = mclUint8;
      return true;
    case Kind::Int32:
      *out = mclInt32;
      return true;
    case Kind::Uint32:
      *out = mclUint32;
      return true;
    case Kind::Int64:
      *out = mclInt64;
      return true;
    case Kind::Uint64:
      *out = mclUint64;
      return true;
    case Kind::Float32:
      *out = mclFloat32;
      return true;
    case Kind::Float64:
      *out = mclFloat64;
      return true;
    default:
      return false;
  }
}

template <typename T>
void foldBuiltin(Builtin b, const void* in, void* inout, size_t n) {
  const T* a = static_cast<const T*>(in);
  T* acc = static_cast<T*>(inout);
  for (size_t i = 0; i < n; ++i) {
    T x;
    T y;
    std::memcpy(&x, a + i, sizeof(T));
    std::memcpy(&y, acc + i, sizeof(T));
    if (b == Builtin::Sum)
      y = T(x + y);
    else if (b == Builtin::Max)
      y = y < x ? x : y;
    else
      y = x < y ? x : y;
    std::memcpy(acc + i, &y, sizeof(T));
  }
}

}  // namespace

ReducePlan planReduce(const Datatype& type, const Op& op) {
  ReducePlan plan;
  if (op.function != nullptr && type.bytes == 2 &&
      recogniseOnHalves(op) != HalfKind::None) {
    plan.native = true;
    plan.type = op.recognised == HalfKind::Float16 ? mclFloat16 : mclBfloat16;
    plan.op = mclOp(op.computes);
    return plan;
  }
  if (op.function != nullptr) return plan;  // run as given, gathered
  if (type.kind == Kind::Contiguous) {
    plan.refusal = std::string(op.name) + " on " + datatypeText(type) +
                   ": MPI's own ops take predefined datatypes only";
    return plan;
  }
  if (nativeType(type.kind, &plan.type)) {
    plan.native = true;
    plan.op = mclOp(op.builtin);
    return plan;
  }
  if (type.kind == Kind::Bool) {
    // 0 or 1 each: a sum (or), a max (or) and a min (and) of bools.
    plan.native = true;
    plan.type = mclUint8;
    plan.op = op.builtin == Builtin::Min ? mclMin : mclMax;
    return plan;
  }
  if (type.kind == Kind::Complex64 && op.builtin == Builtin::Sum) {
    plan.native = true;
    plan.type = mclFloat32;
    plan.elementsPerItem = 2;
    return plan;
  }
  if (type.kind == Kind::Complex64)
    plan.refusal = std::string(op.name) +
                   " on MPI_C_COMPLEX: MPI defines no order of complex "
                   "numbers (MLX sends its own max and min functions)";
  return plan;  // int16, uint16: gathered and folded here
}

void fold(const Datatype& type, MPI_Datatype handle, const Op& op,
          const void* in, void* inout, int count) {
  if (op.function != nullptr) {
    int len = count;
    op.function(const_cast<void*>(in), inout, &len, &handle);
    return;
  }
  const auto n = static_cast<size_t>(count);
  if (type.kind == Kind::Int16) foldBuiltin<int16_t>(op.builtin, in, inout, n);
  if (type.kind == Kind::Uint16)
    foldBuiltin<uint16_t>(op.builtin, in, inout, n);
}

}  // namespace mcl::mpi
