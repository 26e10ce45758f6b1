#include "element_types.h"

#include <c10/core/ScalarType.h>

#include "torch_version.h"

namespace mcl::torch_backend {

namespace {

const char* opName(c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::SUM:
      return "sum";
    case c10d::ReduceOp::AVG:
      return "avg";
    case c10d::ReduceOp::PRODUCT:
      return "product";
    case c10d::ReduceOp::MIN:
      return "min";
    case c10d::ReduceOp::MAX:
      return "max";
    case c10d::ReduceOp::BAND:
      return "band";
    case c10d::ReduceOp::BOR:
      return "bor";
    case c10d::ReduceOp::BXOR:
      return "bxor";
    default:
      return "premul_sum";
  }
}

}  // namespace

WireType movedAs(const at::Tensor& t) {
  return {mclUint8, static_cast<size_t>(t.element_size())};
}

mclRedOp_t redOpOf(const c10d::ReduceOp& op, const std::string& what) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
      return mclSum;
    case c10d::ReduceOp::AVG:
      return mclAvg;
    case c10d::ReduceOp::PRODUCT:
      return mclProd;
    case c10d::ReduceOp::MIN:
      return mclMin;
    case c10d::ReduceOp::MAX:
      return mclMax;
    default:
      throwValueError("mcl backend: " + what + ": reduce op " + opName(op.op_) +
                      " is not supported (sum, product, min, max, avg)");
  }
}

WireType reducedAs(const at::Tensor& t, const c10d::ReduceOp& op,
                   const std::string& what) {
  const mclRedOp_t red = redOpOf(op, what);
  switch (t.scalar_type()) {
    case at::kFloat:
      return {mclFloat32, 1};
    case at::kDouble:
      return {mclFloat64, 1};
    case at::kHalf:
      return {mclFloat16, 1};
    case at::kBFloat16:
      return {mclBfloat16, 1};
    case at::kByte:
      return {mclUint8, 1};
    case at::kChar:
      return {mclInt8, 1};
    case at::kInt:
      return {mclInt32, 1};
    case at::kLong:
      return {mclInt64, 1};
    case at::kBool:
      // True/false as 0/1 bytes: max is "any", min is "all".
      if (red == mclMax || red == mclMin) return {mclUint8, 1};
      break;
    case at::kComplexFloat:
      // Sums and averages of complex numbers are those of their parts.
      if (red == mclSum || red == mclAvg) return {mclFloat32, 2};
      break;
    case at::kComplexDouble:
      if (red == mclSum || red == mclAvg) return {mclFloat64, 2};
      break;
    default:
      break;
  }
  throwValueError("mcl backend: " + what + ": cannot reduce " +
                  std::string(c10::toString(t.scalar_type())) + " with " +
                  opName(op.op_) +
                  " (mcl reduces float32/64, float16, bfloat16, int8/32/64, "
                  "uint8; bool with max and min; complex with sum and avg)");
}

}  // namespace mcl::torch_backend
