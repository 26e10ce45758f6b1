#include "reference.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <set>

#include "algorithms/kernels/float_convert.h"

namespace mcl::test {

namespace kernels = mcl::kernels;

namespace {

thread_local bool sharedBuffers = false;
std::mutex sharedMutex;
std::set<void*> sharedAllocations;

}  // namespace

void useSharedBuffers(bool shared) { sharedBuffers = shared; }

void* allocateTestBuffer(size_t bytes) {
  if (!sharedBuffers) {
    void* p = std::malloc(std::max<size_t>(bytes, 1));
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  void* p = nullptr;
  if (mclMemAlloc(&p, std::max<size_t>(bytes, 1)) != mclSuccess)
    throw std::bad_alloc();
  std::lock_guard<std::mutex> lock(sharedMutex);
  sharedAllocations.insert(p);
  return p;
}

void freeTestBuffer(void* p) {
  {
    std::lock_guard<std::mutex> lock(sharedMutex);
    if (sharedAllocations.erase(p) == 0) {
      std::free(p);
      return;
    }
  }
  mclMemFree(p);
}

size_t typeBytes(mclDataType_t type) {
  switch (type) {
    case mclInt8:
    case mclUint8:
    case mclFloat8e4m3:
    case mclFloat8e5m2:
      return 1;
    case mclFloat16:
    case mclBfloat16:
      return 2;
    case mclInt32:
    case mclUint32:
    case mclFloat32:
      return 4;
    case mclInt64:
    case mclUint64:
    case mclFloat64:
      return 8;
    default:
      return 0;
  }
}

const char* typeLabel(mclDataType_t type) {
  static const char* names[] = {"int8",    "uint8",    "int32",   "uint32",
                                "int64",   "uint64",   "float16", "float32",
                                "float64", "bfloat16", "f8e4m3",  "f8e5m2"};
  return static_cast<int>(type) < 12 ? names[type] : "?";
}

const char* opLabel(mclRedOp_t op) {
  static const char* names[] = {"sum", "prod", "max", "min", "avg"};
  return static_cast<int>(op) < 5 ? names[op] : "?";
}

static bool isUnsigned(mclDataType_t t) {
  return t == mclUint8 || t == mclUint32 || t == mclUint64;
}

double reductionInput(mclDataType_t type, mclRedOp_t op, int nranks, int rank,
                      size_t i) {
  auto r = static_cast<size_t>(rank);
  switch (op) {
    case mclSum:
    case mclAvg:
      // e5m2 holds every integer up to 8 only.
      if (type == mclFloat8e5m2 && nranks > 4) return (r + i) % 2;
      return static_cast<double>((r + i) % 3);
    case mclProd:
      return 1.0 + static_cast<double>((r + i) % 2);
    default: {
      double v = static_cast<double>((r * 7 + i * 3) % 11);
      return isUnsigned(type) ? v : v - 5;
    }
  }
}

double movementInput(mclDataType_t type, int rank, size_t i) {
  auto r = static_cast<size_t>(rank);
  if (type == mclFloat8e4m3 || type == mclFloat8e5m2)
    return static_cast<double>((r * 5 + i) % 8);
  return static_cast<double>((r * 31 + i) % 97);
}

void encode(mclDataType_t type, double value, void* dst) {
  auto asInt = static_cast<int64_t>(value);
  switch (type) {
    case mclInt8: {
      auto v = static_cast<int8_t>(asInt);
      memcpy(dst, &v, 1);
      break;
    }
    case mclUint8: {
      auto v = static_cast<uint8_t>(asInt);
      memcpy(dst, &v, 1);
      break;
    }
    case mclInt32: {
      auto v = static_cast<int32_t>(asInt);
      memcpy(dst, &v, 4);
      break;
    }
    case mclUint32: {
      auto v = static_cast<uint32_t>(asInt);
      memcpy(dst, &v, 4);
      break;
    }
    case mclInt64:
      memcpy(dst, &asInt, 8);
      break;
    case mclUint64: {
      auto v = static_cast<uint64_t>(asInt);
      memcpy(dst, &v, 8);
      break;
    }
    case mclFloat32: {
      auto v = static_cast<float>(value);
      memcpy(dst, &v, 4);
      break;
    }
    case mclFloat64:
      memcpy(dst, &value, 8);
      break;
    case mclFloat16: {
      uint16_t v = kernels::floatToHalf(static_cast<float>(value));
      memcpy(dst, &v, 2);
      break;
    }
    case mclBfloat16: {
      uint16_t v = kernels::floatToBf16(static_cast<float>(value));
      memcpy(dst, &v, 2);
      break;
    }
    case mclFloat8e4m3: {
      uint8_t v = kernels::floatToE4m3(static_cast<float>(value));
      memcpy(dst, &v, 1);
      break;
    }
    case mclFloat8e5m2: {
      uint8_t v = kernels::floatToE5m2(static_cast<float>(value));
      memcpy(dst, &v, 1);
      break;
    }
    default:
      break;
  }
}

double exactReduction(mclDataType_t type, mclRedOp_t op, int nranks, size_t i) {
  double acc = reductionInput(type, op, nranks, 0, i);
  for (int r = 1; r < nranks; ++r) {
    double v = reductionInput(type, op, nranks, r, i);
    switch (op) {
      case mclSum:
      case mclAvg:
        acc += v;
        break;
      case mclProd:
        acc *= v;
        break;
      case mclMax:
        acc = std::max(acc, v);
        break;
      case mclMin:
        acc = std::min(acc, v);
        break;
      default:
        break;
    }
  }
  return acc;
}

void encodeReduction(mclDataType_t type, mclRedOp_t op, int nranks,
                     double exact, void* dst) {
  if (op != mclAvg) return encode(type, exact, dst);
  switch (type) {
    case mclFloat64:
      return encode(type, exact / nranks, dst);
    case mclInt8:
    case mclUint8:
    case mclInt32:
    case mclUint32:
    case mclInt64:
    case mclUint64:
      return encode(
          type, static_cast<double>(static_cast<int64_t>(exact) / nranks), dst);
    default:
      // float, and half/bf16/fp8 which divide in fp32 and round once.
      return encode(type,
                    static_cast<double>(static_cast<float>(exact) /
                                        static_cast<float>(nranks)),
                    dst);
  }
}

}  // namespace mcl::test
