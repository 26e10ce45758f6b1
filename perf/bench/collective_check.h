// The data check of one call: which input each rank writes, what each
// rank's output must hold afterwards, and how many elements do not.
#pragma once

#include <mcl/mcl.h>

#include <cstdint>

#include "bench/collective_bench.h"

namespace mcl::perf {

struct CheckCase {
  Collective collective;
  mclDataType_t type;
  mclRedOp_t op;
  int root;  // broadcast and reduce
  int rank;
  int nranks;
  CollCounts counts;
  bool inPlace;
  uint64_t seed;  // the same on every rank
};

// Poisons the output and writes this rank's input, in the buffers
// callBuffers gives without shift.
void prepareCheck(const CheckCase& c, char* sendBase, char* recvBase);

// Wrong elements in this rank's whole output after the call. Reduce's
// non-root ranks must have left their receive buffer untouched.
int64_t countWrongElements(const CheckCase& c, char* sendBase, char* recvBase);

}  // namespace mcl::perf
