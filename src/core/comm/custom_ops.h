// The reduction ops a communicator's user created (mclRedOpCreatePreMulSum):
// op values from mclNumOps on, each a slot of this table until destroyed.
// Calls resolve their op here before validation, into a plain sum with a
// pre-multiplication (OpArgs::preMultiply).
#pragma once

#include <mcl/mcl.h>

#include <mutex>
#include <string>
#include <vector>

#include "algorithms/op.h"

namespace mcl {

class CustomOps {
 public:
  // Throws mclInvalidArgument naming the argument.
  mclRedOp_t createPreMulSum(const void* scalar, mclDataType_t type,
                             mclScalarResidence_t residence,
                             const std::string& label);
  void destroy(mclRedOp_t op, const std::string& label);
  // A copy of `op` with a custom op replaced by mclSum and its
  // pre-multiplication; built-in ops pass through. Throws for an op that
  // is not live on this communicator or whose type differs from the call's.
  OpArgs resolve(const OpArgs& op, const std::string& label) const;

 private:
  struct PreMulSum {
    bool live = false;
    mclDataType_t type = mclFloat32;
    PreMultiply scalar;
  };
  mutable std::mutex mutex_;
  std::vector<PreMulSum> slots_;
};

}  // namespace mcl
