// MCL_CHECK=1: before each collective runs, the ranks all-gather a small
// fingerprint of the call (its number on the communicator, collective,
// type, op, count, root, place in a group) and compare them, so mismatched
// calls fail on every rank with a message naming both calls, instead of
// mixing bytes of different calls or waiting out the timeout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/op.h"

namespace mcl {

// Fixed size and plain, so ranks exchange it as bytes.
struct CallFingerprint {
  uint64_t call = 0;       // collectives checked on this comm before it
  uint64_t count = 0;      // elements, as the API received them
  uint32_t groupSize = 0;  // collectives of this comm in the batch
  uint32_t indexInGroup = 0;
  int32_t root = -1;  // -1 where the collective has none
  uint8_t kind = 0;   // Collective
  uint8_t type = 0;   // mclDataType_t; 0 for a barrier
  uint8_t op = 0;     // mclRedOp_t; kNoOp where nothing is reduced
  uint8_t reserved = 0;
};
static_assert(sizeof(CallFingerprint) == 32, "exchanged as 32 bytes");

// The fingerprint of collective `op`, the index-th of groupSize collectives
// the batch runs on this communicator. Fields a collective does not use are
// left at fixed values, so they never differ.
CallFingerprint fingerprintOf(const OpArgs& op, uint64_t call,
                              uint32_t indexInGroup, uint32_t groupSize);

// Throws mclInvalidUsage naming the first rank whose call differs from
// rank 0's, with both calls, when the fingerprints (one per rank) differ.
// `label` names the communicator.
void compareFingerprints(const std::vector<CallFingerprint>& all,
                         const std::string& label);

// "all-reduce(count 1024, float, sum)", for messages.
std::string describeCall(const CallFingerprint& f);

}  // namespace mcl
