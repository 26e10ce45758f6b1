// Deterministic input patterns and exact expected results for the data
// check. Element i of rank r's input is a small integer chosen so that
// every partial result of every reduction is exactly representable in the
// element type, whatever order the library reduces in: results can then be
// compared bit for bit.
//  - sum: values in [-K, K] (unsigned: [0, K]) with nranks * K within the
//    type's exact-integer range; when even K = 1 does not fit (e5m2 holds
//    every integer only up to 8), at most that many ranks hold a 1 per
//    element and the others 0.
//  - avg: the same without negatives; expected = exact sum divided by
//    nranks once (fp32 for fp32 and narrower floats, fp64 for double,
//    truncating integer division for integers), then rounded to the type.
//  - mulsum (PreMulSum): as sum with room for every value doubled; rank r's
//    values count premulScalar(r) times.
//  - prod: values 1 and 2, with few enough 2s per element that the product
//    (a power of two) fits the type.
//  - max, min and the collectives that only move data: values in [-M, M]
//    (unsigned: [0, M]).
// Outputs are first filled with a "poison" value no check ever expects
// (a NaN, or the most negative / largest integer).
#pragma once

#include <mcl/mcl.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mcl::perf {

static_assert(std::endian::native == std::endian::little,
              "element bit patterns are handled as little-endian integers");

struct Pattern {
  enum class Kind { Range, Ones, PowersOfTwo };
  Kind kind = Kind::Range;
  int64_t lo = 0;     // Range: smallest value
  int64_t hi = 0;     // Range: largest value
  int64_t limit = 0;  // Ones: ranks holding 1; PowersOfTwo: most 2s
  int nranks = 1;
  uint64_t seed = 0;
};

// reduces: whether the collective applies op (allreduce, reduce,
// reducescatter); otherwise op is ignored.
Pattern makePattern(mclDataType_t type, mclRedOp_t op, bool reduces, int nranks,
                    uint64_t seed);

// Element index of rank's input.
int64_t inputValue(const Pattern& p, int rank, size_t index);

// The bits of the exact small integer value in type.
uint64_t valueBits(mclDataType_t type, int64_t value);
// The bits of op applied over every rank's element index.
uint64_t reducedBits(const Pattern& p, mclDataType_t type, mclRedOp_t op,
                     size_t index);
// The bits of a value no check expects.
uint64_t poisonBits(mclDataType_t type);

inline uint64_t loadElement(const void* buf, size_t index, size_t size) {
  uint64_t bits = 0;
  std::memcpy(&bits, static_cast<const char*>(buf) + index * size, size);
  return bits;
}

inline void storeElement(void* buf, size_t index, size_t size, uint64_t bits) {
  std::memcpy(static_cast<char*>(buf) + index * size, &bits, size);
}

// Writes rank's input elements [first, first + count) to buf[0, count).
void fillInput(void* buf, mclDataType_t type, const Pattern& p, int rank,
               size_t first, size_t count);
void fillPoison(void* buf, mclDataType_t type, size_t count);

// Elements of buf[0, count) whose bits differ from expected(i).
template <typename Expected>
int64_t countWrong(const void* buf, size_t elementSize, size_t count,
                   Expected expected) {
  int64_t wrong = 0;
  for (size_t i = 0; i < count; ++i)
    if (loadElement(buf, i, elementSize) != expected(i)) ++wrong;
  return wrong;
}

}  // namespace mcl::perf
