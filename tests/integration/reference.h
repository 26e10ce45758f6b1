// Test data and expected results for the collective matrix. Inputs are small
// integers chosen per type and op so that every partial result is exactly
// representable (fp8 e5m2 has two mantissa bits): a correct library must
// then match the reference bit for bit, whatever the reduction order.
#pragma once

#include <mcl/mcl.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mcl::test {

size_t typeBytes(mclDataType_t type);
const char* typeLabel(mclDataType_t type);
const char* opLabel(mclRedOp_t op);

// Input of `rank` at element i, for reductions with op.
double reductionInput(mclDataType_t type, mclRedOp_t op, int nranks, int rank,
                      size_t i);
// Input for data movement (gather, broadcast, send): depends on rank and i.
double movementInput(mclDataType_t type, int rank, size_t i);

// Writes value (exact, or rounded to nearest even for small floats; wrapped
// for integers) as one element of type at dst.
void encode(mclDataType_t type, double value, void* dst);

// The expected element of op over the ranks' inputs at element i.
double exactReduction(mclDataType_t type, mclRedOp_t op, int nranks, size_t i);
// Encodes the final result: avg divides as mcl documents (truncating for
// integers, in fp32 for half and 8-bit floats).
void encodeReduction(mclDataType_t type, mclRedOp_t op, int nranks,
                     double exact, void* dst);

// Where test buffers come from: malloc, or mclMemAlloc (memory same-host
// peers can map, so calls run in place) while this thread asked for it.
void useSharedBuffers(bool shared);
void* allocateTestBuffer(size_t bytes);
void freeTestBuffer(void* p);

template <class T>
struct TestAllocator {
  using value_type = T;
  TestAllocator() = default;
  template <class U>
  TestAllocator(const TestAllocator<U>&) {}
  T* allocate(size_t n) {
    return static_cast<T*>(allocateTestBuffer(n * sizeof(T)));
  }
  void deallocate(T* p, size_t) { freeTestBuffer(p); }
  template <class U>
  bool operator==(const TestAllocator<U>&) const {
    return true;
  }
};

using Bytes = std::vector<uint8_t, TestAllocator<uint8_t>>;

// Buffer of count elements of `type`, filled by value(i).
template <class F>
Bytes makeBuffer(mclDataType_t type, size_t count, F value) {
  Bytes b(count * typeBytes(type));
  for (size_t i = 0; i < count; ++i)
    encode(type, value(i), b.data() + i * typeBytes(type));
  return b;
}

}  // namespace mcl::test
