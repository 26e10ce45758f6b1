#include "common/data_check.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "common/dtype.h"
#include "common/float_conv.h"

namespace mcl::perf {

namespace {

// What a type holds exactly.
struct TypeLimits {
  int64_t exact;    // every integer in [-exact, exact] (or [0, exact])
  bool isSigned;    // negative values allowed
  int64_t maxPow2;  // 2^maxPow2 still fits (and fits an int64)
  uint64_t poison;  // bits no check expects: NaN or an unused integer
};

TypeLimits limitsOf(mclDataType_t type) {
  switch (type) {
    case mclInt8:
      return {120, true, 6, 0x80};
    case mclUint8:
      return {250, false, 7, 0xff};
    case mclInt32:
      return {int64_t{1} << 30, true, 30, 0x80000000u};
    case mclUint32:
      return {int64_t{1} << 31, false, 31, 0xffffffffu};
    case mclInt64:
      return {int64_t{1} << 62, true, 62, uint64_t{1} << 63};
    case mclUint64:
      return {int64_t{1} << 62, false, 62, ~uint64_t{0}};
    case mclFloat16:
      return {2048, true, 15, 0x7fff};
    case mclFloat32:
      return {int64_t{1} << 24, true, 62, 0x7fffffffu};
    case mclFloat64:
      return {int64_t{1} << 53, true, 62, 0x7fffffffffffffffu};
    case mclBfloat16:
      return {256, true, 62, 0x7fff};
    case mclFloat8e4m3:
      return {16, true, 8, 0x7f};
    case mclFloat8e5m2:
      return {8, true, 15, 0x7f};
    default:
      return {0, false, 0, 0};
  }
}

// Values stay small so patterns are cheap to reason about; they still
// vary across ranks and elements.
constexpr int64_t kValueCap = 50;

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

// The rank's position in element index's rotation, in [0, nranks).
uint64_t rotation(const Pattern& p, int rank, size_t index) {
  return (index + static_cast<uint64_t>(rank) + p.seed) %
         static_cast<uint64_t>(p.nranks);
}

uint64_t floatBits(mclDataType_t type, float value) {
  switch (type) {
    case mclFloat16:
      return floatToHalf(value);
    case mclBfloat16:
      return floatToBfloat16(value);
    case mclFloat8e4m3:
      return floatToFp8e4m3(value);
    case mclFloat8e5m2:
      return floatToFp8e5m2(value);
    default:
      return std::bit_cast<uint32_t>(value);
  }
}

uint64_t averageBits(mclDataType_t type, int64_t sum, int nranks) {
  switch (type) {
    case mclFloat64:
      return std::bit_cast<uint64_t>(static_cast<double>(sum) /
                                     static_cast<double>(nranks));
    case mclFloat16:
    case mclFloat32:
    case mclBfloat16:
    case mclFloat8e4m3:
    case mclFloat8e5m2:
      return floatBits(type,
                       static_cast<float>(sum) / static_cast<float>(nranks));
    default:
      return valueBits(type, sum / nranks);
  }
}

}  // namespace

Pattern makePattern(mclDataType_t type, mclRedOp_t op, bool reduces, int nranks,
                    uint64_t seed) {
  const TypeLimits lim = limitsOf(type);
  Pattern p;
  p.nranks = std::max(nranks, 1);
  p.seed = seed;
  if (!reduces || op == mclMax || op == mclMin) {
    const int64_t m = std::min(kValueCap, lim.exact);
    p.lo = lim.isSigned ? -m : 0;
    p.hi = m;
  } else if (op == mclProd) {
    p.kind = Pattern::Kind::PowersOfTwo;
    p.limit = std::min<int64_t>(p.nranks, lim.maxPow2);
  } else {
    // mulsum: room for every rank's value doubled (premulScalar).
    const int64_t room = op == kPreMulSumOp ? 2 * int64_t{p.nranks} : p.nranks;
    const int64_t k = std::min(kValueCap, lim.exact / room);
    if (k == 0) {
      p.kind = Pattern::Kind::Ones;
      p.limit =
          op == kPreMulSumOp ? std::max<int64_t>(1, lim.exact / 2) : lim.exact;
    } else {
      p.lo = (lim.isSigned && (op == mclSum || op == kPreMulSumOp)) ? -k : 0;
      p.hi = k;
    }
  }
  return p;
}

int64_t inputValue(const Pattern& p, int rank, size_t index) {
  switch (p.kind) {
    case Pattern::Kind::Ones:
      return rotation(p, rank, index) < static_cast<uint64_t>(p.limit) ? 1 : 0;
    case Pattern::Kind::PowersOfTwo: {
      const uint64_t twos =
          mix(index ^ (p.seed << 32)) % static_cast<uint64_t>(p.limit + 1);
      return rotation(p, rank, index) < twos ? 2 : 1;
    }
    case Pattern::Kind::Range:
      break;
  }
  const uint64_t span = static_cast<uint64_t>(p.hi - p.lo) + 1;
  const uint64_t h = mix(p.seed * 0x100000001b3u ^ index * 0x9e3779b97f4a7c15u ^
                         static_cast<uint64_t>(rank) * 0xc2b2ae3d27d4eb4fu);
  return p.lo + static_cast<int64_t>(h % span);
}

uint64_t valueBits(mclDataType_t type, int64_t value) {
  const auto asFloat = static_cast<float>(value);
  switch (type) {
    case mclInt8:
    case mclUint8:
    case mclInt32:
    case mclUint32:
    case mclInt64:
    case mclUint64: {
      const size_t bits = typeSize(type) * 8;
      const uint64_t mask =
          bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      return static_cast<uint64_t>(value) & mask;
    }
    case mclFloat64:
      return std::bit_cast<uint64_t>(static_cast<double>(value));
    default:
      return floatBits(type, asFloat);
  }
}

uint64_t reducedBits(const Pattern& p, mclDataType_t type, mclRedOp_t op,
                     size_t index) {
  // mulsum: each rank's value times its scalar, then summed.
  const auto input = [&](int r) {
    const int64_t v = inputValue(p, r, index);
    return op == kPreMulSumOp ? v * premulScalar(r) : v;
  };
  int64_t acc = input(0);
  for (int r = 1; r < p.nranks; ++r) {
    const int64_t v = input(r);
    switch (op) {
      case mclProd:
        acc *= v;
        break;
      case mclMax:
        acc = std::max(acc, v);
        break;
      case mclMin:
        acc = std::min(acc, v);
        break;
      default:  // sum, avg, mulsum
        acc += v;
        break;
    }
  }
  if (op == mclAvg) return averageBits(type, acc, p.nranks);
  return valueBits(type, acc);
}

uint64_t poisonBits(mclDataType_t type) { return limitsOf(type).poison; }

void fillInput(void* buf, mclDataType_t type, const Pattern& p, int rank,
               size_t first, size_t count) {
  const size_t size = typeSize(type);
  for (size_t i = 0; i < count; ++i)
    storeElement(buf, i, size, valueBits(type, inputValue(p, rank, first + i)));
}

void fillPoison(void* buf, mclDataType_t type, size_t count) {
  const size_t size = typeSize(type);
  const uint64_t bits = poisonBits(type);
  for (size_t i = 0; i < count; ++i) storeElement(buf, i, size, bits);
}

}  // namespace mcl::perf
