// Names and sizes of mcl's data types and reduction operations, spelled the
// way nccl-tests prints and accepts them.
#pragma once

#include <mcl/mcl.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcl::perf {

// Bytes per element.
size_t typeSize(mclDataType_t type);
// "int8", "half", "float", "bfloat16", "f8e4m3", ... (nccl-tests' names).
const char* typeName(mclDataType_t type);
// "sum", "prod", "max", "min", "avg", "mulsum".
const char* opName(mclRedOp_t op);

// Stands for nccl-tests' mulsum in the options and the data check: the
// benchmark makes the real op with mclRedOpCreatePreMulSum on each
// communicator, rank r multiplying by premulScalar(r).
constexpr mclRedOp_t kPreMulSumOp = mclMaxRedOp;
// 1 on even ranks and 2 on odd ones: exact in every type, and a result
// that differs from plain sum's whenever there are two ranks or more.
constexpr int64_t premulScalar(int rank) { return 1 + rank % 2; }

// A type name, an alias ("fp16", "bf16", "fp32", ...) or "all" (every type,
// in nccl-tests' order). std::nullopt for anything else.
std::optional<std::vector<mclDataType_t>> parseTypes(std::string_view text);
// An op name or "all". std::nullopt for anything else.
std::optional<std::vector<mclRedOp_t>> parseOps(std::string_view text);

// "int8, uint8, ..." and "sum, prod, ...", for messages.
std::string typeNameList();
std::string opNameList();

}  // namespace mcl::perf
