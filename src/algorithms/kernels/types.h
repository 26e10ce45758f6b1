// Facts about mcl's data types and reduction ops: element sizes, validity,
// and the names mcl-perf prints and parses (the same names nccl-tests uses,
// so results from the two tools line up).
#ifndef MCL_ALGORITHMS_KERNELS_TYPES_H_
#define MCL_ALGORITHMS_KERNELS_TYPES_H_

#include <mcl/mcl.h>

#include <cstddef>
#include <string_view>

namespace mcl::kernels {

// Bytes per element, or 0 when type is not a valid mclDataType_t. Inline:
// the step loop asks at every poll.
constexpr size_t typeSize(mclDataType_t type) {
  constexpr unsigned char kSizes[mclNumTypes] = {1, 1, 4, 4, 8, 8,
                                                 2, 4, 8, 2, 1, 1};
  const int t = static_cast<int>(type);
  return t >= 0 && t < mclNumTypes ? kSizes[t] : 0;
}

// Whether a raw integer (as received through the C API) names a type or op.
bool isValidType(int type);
bool isValidOp(int op);

// nccl-tests names: "int8", "uint8", "int32", "uint32", "int64", "uint64",
// "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2" and "sum",
// "prod", "max", "min", "avg". Never NULL: "unknown" for invalid values.
const char* typeName(mclDataType_t type);
const char* opName(mclRedOp_t op);

// Accept the names above plus common aliases ("fp32", "float16", "bf16",
// "int", "char", "float64", "e4m3", ...), ignoring case. Return false and
// leave *out untouched when the name is unknown.
bool parseTypeName(std::string_view name, mclDataType_t* out);
bool parseOpName(std::string_view name, mclRedOp_t* out);

}  // namespace mcl::kernels

#endif  // MCL_ALGORITHMS_KERNELS_TYPES_H_
