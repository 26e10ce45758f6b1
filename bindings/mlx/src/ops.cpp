#include "ops.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "half_bits.h"
#include "predefined.h"

namespace mcl::mpi {

namespace {

const Op kSum{Builtin::Sum, "MPI_SUM"};
const Op kMax{Builtin::Max, "MPI_MAX"};
const Op kMin{Builtin::Min, "MPI_MIN"};

std::mutex& madeOpsMutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::map<const void*, std::unique_ptr<Op>>& madeOps() {
  static auto* m = new std::map<const void*, std::unique_ptr<Op>>;
  return *m;
}

// Values whose sum, max and min differ, each exact in float16 and bfloat16,
// and whose encodings in one kind read as other numbers in the other.
constexpr float kIn[] = {1.0f, -2.0f, 3.5f, 0.25f, -8.0f, 6.0f};
constexpr float kInOut[] = {2.0f, 5.0f, -1.5f, 0.75f, -0.5f, 6.0f};
constexpr int kProbe = 6;

float apply(Builtin b, float in, float inout) {
  switch (b) {
    case Builtin::Sum:
      return in + inout;
    case Builtin::Max:
      return inout < in ? in : inout;
    case Builtin::Min:
      return in < inout ? in : inout;
    case Builtin::None:
      break;
  }
  return 0;
}

// Whether `function` computes `b` elementwise on 2-byte floats of `kind`.
bool computes(MPI_User_function* function, HalfKind kind, Builtin b) {
  auto encode = [kind](float f) {
    return kind == HalfKind::Float16 ? floatToHalf(f) : floatToBf16(f);
  };
  uint16_t in[kProbe], inout[kProbe], want[kProbe];
  for (int i = 0; i < kProbe; ++i) {
    in[i] = encode(kIn[i]);
    inout[i] = encode(kInOut[i]);
    want[i] = encode(apply(b, kIn[i], kInOut[i]));
  }
  int len = kProbe;
  MPI_Datatype type = nullptr;
  function(in, inout, &len, &type);
  for (int i = 0; i < kProbe; ++i)
    if (inout[i] != want[i]) return false;
  return true;
}

}  // namespace

const Op* findOp(MPI_Op handle) {
  if (handle == &ompi_mpi_op_sum) return &kSum;
  if (handle == &ompi_mpi_op_max) return &kMax;
  if (handle == &ompi_mpi_op_min) return &kMin;
  std::lock_guard<std::mutex> lock(madeOpsMutex());
  auto it = madeOps().find(handle);
  return it == madeOps().end() ? nullptr : it->second.get();
}

MPI_Op createOp(MPI_User_function* function, bool commute) {
  auto op = std::make_unique<Op>();
  op->builtin = Builtin::None;
  op->function = function;
  op->commute = commute;
  op->name = "a user function";
  void* handle = op.get();
  std::lock_guard<std::mutex> lock(madeOpsMutex());
  madeOps()[handle] = std::move(op);
  return handle;
}

HalfKind recogniseOnHalves(const Op& op) {
  // The probes run the function on 2-byte elements, as the call will: safe
  // for a function meant for them (elementwise math on any values).
  std::call_once(op.probed, [&op] {
    if (!op.commute) return;
    for (HalfKind kind : {HalfKind::Float16, HalfKind::Bfloat16})
      for (Builtin b : {Builtin::Sum, Builtin::Max, Builtin::Min})
        if (op.recognised == HalfKind::None && computes(op.function, kind, b)) {
          op.recognised = kind;
          op.computes = b;
        }
  });
  return op.recognised;
}

std::string opText(const Op& op) {
  if (op.function == nullptr) return op.name;
  if (op.recognised == HalfKind::None) return "a user function";
  static const char* kNames[] = {"sum", "max", "min"};
  return std::string("a user function (MLX's ") + kNames[int(op.computes)] +
         " of " +
         (op.recognised == HalfKind::Float16 ? "float16" : "bfloat16") + ")";
}

}  // namespace mcl::mpi
