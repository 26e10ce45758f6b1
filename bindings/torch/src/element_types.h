// How a tensor's elements travel and reduce: mcl's type for each of
// torch's, the reductions it allows, and torch's ReduceOp as mcl's.
#pragma once

#include <ATen/ATen.h>
#include <mcl/mcl.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <cstddef>
#include <string>

namespace mcl::torch_backend {

// What an operation hands mcl for a tensor: a count of mcl elements (a
// complex number is two reals) or, for operations that only move bytes,
// the bytes.
struct WireType {
  mclDataType_t type;
  size_t elementsPerItem;  // mcl elements per torch element
};

// For operations that move bytes only (gather, broadcast, all-to-all):
// any type, as bytes.
WireType movedAs(const at::Tensor& t);

// For reductions: the type mcl reduces `t`'s elements as, with `op`.
// Throws ValueError naming `what`, the type and the op where mcl cannot
// (int16, bitwise ops, a product of complex numbers).
WireType reducedAs(const at::Tensor& t, const c10d::ReduceOp& op,
                   const std::string& what);

mclRedOp_t redOpOf(const c10d::ReduceOp& op, const std::string& what);

}  // namespace mcl::torch_backend
