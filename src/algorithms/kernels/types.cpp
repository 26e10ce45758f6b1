#include "algorithms/kernels/types.h"

#include <cstddef>
#include <string_view>

namespace mcl::kernels {
namespace {

struct TypeInfo {
  const char* name;  // the nccl-tests spelling, printed by typeName
  size_t size;
};

// Indexed by mclDataType_t value.
constexpr TypeInfo kTypes[mclNumTypes] = {
    {"int8", 1},   {"uint8", 1},    {"int32", 4},  {"uint32", 4},
    {"int64", 8},  {"uint64", 8},   {"half", 2},   {"float", 4},
    {"double", 8}, {"bfloat16", 2}, {"f8e4m3", 1}, {"f8e5m2", 1},
};

// Indexed by mclRedOp_t value.
constexpr const char* kOpNames[mclNumOps] = {"sum", "prod", "max", "min",
                                             "avg"};

struct TypeAlias {
  const char* name;
  mclDataType_t type;
};

// Spellings people type besides the canonical names: PyTorch/NumPy style
// ("float16", "bf16"), C style ("char", "int") and short fp8 forms.
constexpr TypeAlias kTypeAliases[] = {
    {"char", mclInt8},
    {"int", mclInt32},
    {"uint", mclUint32},
    {"float16", mclFloat16},
    {"fp16", mclFloat16},
    {"f16", mclFloat16},
    {"float32", mclFloat32},
    {"fp32", mclFloat32},
    {"f32", mclFloat32},
    {"float64", mclFloat64},
    {"fp64", mclFloat64},
    {"f64", mclFloat64},
    {"bf16", mclBfloat16},
    {"e4m3", mclFloat8e4m3},
    {"fp8e4m3", mclFloat8e4m3},
    {"float8e4m3", mclFloat8e4m3},
    {"float8_e4m3fn", mclFloat8e4m3},
    {"e5m2", mclFloat8e5m2},
    {"fp8e5m2", mclFloat8e5m2},
    {"float8e5m2", mclFloat8e5m2},
    {"float8_e5m2", mclFloat8e5m2},
};

struct OpAlias {
  const char* name;
  mclRedOp_t op;
};

constexpr OpAlias kOpAliases[] = {
    {"product", mclProd}, {"mul", mclProd},    {"maximum", mclMax},
    {"minimum", mclMin},  {"average", mclAvg}, {"mean", mclAvg},
};

char toLowerAscii(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (toLowerAscii(a[i]) != toLowerAscii(b[i])) return false;
  }
  return true;
}

}  // namespace

bool isValidType(int type) { return type >= 0 && type < mclNumTypes; }

bool isValidOp(int op) { return op >= 0 && op < mclNumOps; }

// typeSize's table (in the header) and the names' agree.
constexpr bool sizesAgree() {
  for (int t = 0; t < mclNumTypes; ++t)
    if (typeSize(static_cast<mclDataType_t>(t)) != kTypes[t].size) return false;
  return true;
}
static_assert(sizesAgree());

const char* typeName(mclDataType_t type) {
  return isValidType(type) ? kTypes[type].name : "unknown";
}

const char* opName(mclRedOp_t op) {
  return isValidOp(op) ? kOpNames[op] : "unknown";
}

bool parseTypeName(std::string_view name, mclDataType_t* out) {
  for (int t = 0; t < mclNumTypes; ++t) {
    if (equalsIgnoringCase(name, kTypes[t].name)) {
      *out = static_cast<mclDataType_t>(t);
      return true;
    }
  }
  for (const TypeAlias& alias : kTypeAliases) {
    if (equalsIgnoringCase(name, alias.name)) {
      *out = alias.type;
      return true;
    }
  }
  return false;
}

bool parseOpName(std::string_view name, mclRedOp_t* out) {
  for (int op = 0; op < mclNumOps; ++op) {
    if (equalsIgnoringCase(name, kOpNames[op])) {
      *out = static_cast<mclRedOp_t>(op);
      return true;
    }
  }
  for (const OpAlias& alias : kOpAliases) {
    if (equalsIgnoringCase(name, alias.name)) {
      *out = alias.op;
      return true;
    }
  }
  return false;
}

}  // namespace mcl::kernels
