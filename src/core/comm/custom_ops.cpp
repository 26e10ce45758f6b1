#include "core/comm/custom_ops.h"

#include <cstring>
#include <mutex>
#include <string>

#include "algorithms/kernels/types.h"
#include "base/error.h"

namespace mcl {

namespace {

constexpr size_t kMaxCustomOps = 1 << 16;

}  // namespace

mclRedOp_t CustomOps::createPreMulSum(const void* scalar, mclDataType_t type,
                                      mclScalarResidence_t residence,
                                      const std::string& label) {
  if (scalar == nullptr)
    throw error(mclInvalidArgument, "%s: scalar is NULL", label.c_str());
  if (!kernels::isValidType(type))
    throw error(mclInvalidArgument,
                "%s: datatype %d is not an mclDataType_t (0..%d)",
                label.c_str(), static_cast<int>(type), mclNumTypes - 1);
  if (residence != mclScalarDevice && residence != mclScalarHostImmediate)
    throw error(mclInvalidArgument,
                "%s: residence %d is neither mclScalarDevice nor "
                "mclScalarHostImmediate",
                label.c_str(), static_cast<int>(residence));
  PreMulSum op;
  op.live = true;
  op.type = type;
  op.scalar.active = true;
  if (residence == mclScalarHostImmediate) {
    std::memcpy(op.scalar.value.data(), scalar, kernels::typeSize(type));
  } else {
    op.scalar.pointer = scalar;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  size_t slot = 0;
  while (slot < slots_.size() && slots_[slot].live) ++slot;
  if (slot == kMaxCustomOps)
    throw error(mclInvalidUsage,
                "%s: %zu reduction ops are live; destroy some with "
                "mclRedOpDestroy",
                label.c_str(), kMaxCustomOps);
  if (slot == slots_.size()) slots_.emplace_back();
  slots_[slot] = op;
  return static_cast<mclRedOp_t>(mclNumOps + static_cast<int>(slot));
}

void CustomOps::destroy(mclRedOp_t op, const std::string& label) {
  if (kernels::isValidOp(op))
    throw error(mclInvalidArgument,
                "%s: op %d is built in; only ops from mclRedOpCreatePreMulSum "
                "are destroyed",
                label.c_str(), static_cast<int>(op));
  std::lock_guard<std::mutex> lock(mutex_);
  const long slot = static_cast<long>(op) - mclNumOps;
  if (slot < 0 || size_t(slot) >= slots_.size() || !slots_[size_t(slot)].live)
    throw error(mclInvalidArgument,
                "%s: op %d is not a live op of this communicator (destroyed "
                "already, or made on another one)",
                label.c_str(), static_cast<int>(op));
  slots_[size_t(slot)].live = false;
}

OpArgs CustomOps::resolve(const OpArgs& op, const std::string& label) const {
  const bool reduces = op.kind == Collective::AllReduce ||
                       op.kind == Collective::Reduce ||
                       op.kind == Collective::ReduceScatter;
  if (!reduces || kernels::isValidOp(op.op) || static_cast<int>(op.op) < 0)
    return op;  // validation rejects negative ops
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t slot = static_cast<size_t>(op.op) - mclNumOps;
  if (slot >= slots_.size() || !slots_[slot].live)
    throw error(mclInvalidArgument,
                "%s: op %d is neither built in (0..%d) nor a live op of this "
                "communicator from mclRedOpCreatePreMulSum",
                label.c_str(), static_cast<int>(op.op), mclNumOps - 1);
  const PreMulSum& custom = slots_[slot];
  if (custom.type != op.type)
    throw error(mclInvalidArgument,
                "%s: op %d was made for %s, the call passes %s", label.c_str(),
                static_cast<int>(op.op), kernels::typeName(custom.type),
                kernels::typeName(op.type));
  OpArgs resolved = op;
  resolved.op = mclSum;
  resolved.preMultiply = custom.scalar;
  return resolved;
}

}  // namespace mcl
