// Names and sizes of mcl's data types and reduction operations, spelled the
// way nccl-tests prints and accepts them.
#pragma once

#include <mcl/mcl.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcl::perf {

// Bytes per element.
size_t typeSize(mclDataType_t type);
// "int8", "half", "float", "bfloat16", "f8e4m3", ... (nccl-tests' names).
const char* typeName(mclDataType_t type);
// "sum", "prod", "max", "min", "avg".
const char* opName(mclRedOp_t op);

// A type name, an alias ("fp16", "bf16", "fp32", ...) or "all" (every type,
// in nccl-tests' order). std::nullopt for anything else.
std::optional<std::vector<mclDataType_t>> parseTypes(std::string_view text);
// An op name or "all". std::nullopt for anything else.
std::optional<std::vector<mclRedOp_t>> parseOps(std::string_view text);

// "int8, uint8, ..." and "sum, prod, ...", for messages.
std::string typeNameList();
std::string opNameList();

}  // namespace mcl::perf
