#include "common/dtype.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcl::perf {

namespace {

struct TypeEntry {
  mclDataType_t type;
  const char* name;
  size_t size;
  const char* aliases;  // comma-separated, may be empty
};

// nccl-tests' order, which "-d all" follows.
constexpr TypeEntry kTypes[] = {
    {mclInt8, "int8", 1, "char"},
    {mclUint8, "uint8", 1, ""},
    {mclInt32, "int32", 4, "int"},
    {mclUint32, "uint32", 4, ""},
    {mclInt64, "int64", 8, ""},
    {mclUint64, "uint64", 8, ""},
    {mclFloat16, "half", 2, "float16,fp16"},
    {mclFloat32, "float", 4, "float32,fp32"},
    {mclFloat64, "double", 8, "float64,fp64"},
    {mclBfloat16, "bfloat16", 2, "bf16"},
    {mclFloat8e4m3, "f8e4m3", 1, "fp8_e4m3,e4m3"},
    {mclFloat8e5m2, "f8e5m2", 1, "fp8_e5m2,e5m2"},
};

struct OpEntry {
  mclRedOp_t op;
  const char* name;
};

constexpr OpEntry kOps[] = {
    {mclSum, "sum"}, {mclProd, "prod"}, {mclMax, "max"},
    {mclMin, "min"}, {mclAvg, "avg"},   {kPreMulSumOp, "mulsum"},
};

const TypeEntry* findType(mclDataType_t type) {
  for (const auto& t : kTypes)
    if (t.type == type) return &t;
  return nullptr;
}

bool hasAlias(std::string_view aliases, std::string_view text) {
  while (!aliases.empty()) {
    size_t comma = aliases.find(',');
    if (aliases.substr(0, comma) == text) return true;
    if (comma == std::string_view::npos) break;
    aliases.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

size_t typeSize(mclDataType_t type) {
  const TypeEntry* t = findType(type);
  return t ? t->size : 0;
}

const char* typeName(mclDataType_t type) {
  const TypeEntry* t = findType(type);
  return t ? t->name : "unknown";
}

const char* opName(mclRedOp_t op) {
  for (const auto& o : kOps)
    if (o.op == op) return o.name;
  return "unknown";
}

std::optional<std::vector<mclDataType_t>> parseTypes(std::string_view text) {
  std::vector<mclDataType_t> types;
  if (text == "all") {
    for (const auto& t : kTypes) types.push_back(t.type);
    return types;
  }
  for (const auto& t : kTypes) {
    if (text == t.name || hasAlias(t.aliases, text)) {
      types.push_back(t.type);
      return types;
    }
  }
  return std::nullopt;
}

std::optional<std::vector<mclRedOp_t>> parseOps(std::string_view text) {
  std::vector<mclRedOp_t> ops;
  if (text == "all") {
    for (const auto& o : kOps) ops.push_back(o.op);
    return ops;
  }
  for (const auto& o : kOps) {
    if (text == o.name) {
      ops.push_back(o.op);
      return ops;
    }
  }
  return std::nullopt;
}

std::string typeNameList() {
  std::string list;
  for (const auto& t : kTypes) {
    if (!list.empty()) list += ", ";
    list += t.name;
  }
  return list;
}

std::string opNameList() {
  std::string list;
  for (const auto& o : kOps) {
    if (!list.empty()) list += ", ";
    list += o.name;
  }
  return list;
}

}  // namespace mcl::perf
