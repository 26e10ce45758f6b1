#include "core/run/call_check.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "algorithms/kernels/types.h"
#include "base/error.h"

namespace mcl {

namespace {

constexpr uint8_t kNoOp = 0xff;

bool reduces(Collective kind) {
  return kind == Collective::AllReduce || kind == Collective::Reduce ||
         kind == Collective::ReduceScatter;
}

bool hasRoot(Collective kind) {
  return kind == Collective::Broadcast || kind == Collective::Reduce;
}

bool sameCall(const CallFingerprint& a, const CallFingerprint& b) {
  return std::memcmp(&a, &b, sizeof(a)) == 0;
}

}  // namespace

CallFingerprint fingerprintOf(const OpArgs& op, uint64_t call,
                              uint32_t indexInGroup, uint32_t groupSize) {
  CallFingerprint f;
  f.call = call;
  f.groupSize = groupSize;
  f.indexInGroup = indexInGroup;
  f.kind = static_cast<uint8_t>(op.kind);
  if (op.kind != Collective::Barrier) {
    f.count = op.count;
    f.type = static_cast<uint8_t>(op.type);
  }
  // A PreMulSum is a sum once resolved; its scalar may differ by rank.
  f.op = reduces(op.kind) ? static_cast<uint8_t>(op.op) : kNoOp;
  f.root = hasRoot(op.kind) ? op.root : -1;
  return f;
}

std::string describeCall(const CallFingerprint& f) {
  const auto kind = static_cast<Collective>(f.kind);
  std::string text = collectiveProse(kind);
  if (kind != Collective::Barrier) {
    text += "(count " + std::to_string(f.count) + ", " +
            kernels::typeName(static_cast<mclDataType_t>(f.type));
    if (f.op != kNoOp)
      text +=
          std::string(", ") + kernels::opName(static_cast<mclRedOp_t>(f.op));
    if (f.root >= 0) text += ", root " + std::to_string(f.root);
    text += ")";
  }
  if (f.groupSize > 1)
    text += " (collective " + std::to_string(f.indexInGroup + 1) + " of " +
            std::to_string(f.groupSize) + " in a group)";
  return text;
}

void compareFingerprints(const std::vector<CallFingerprint>& all,
                         const std::string& label) {
  for (size_t r = 1; r < all.size(); ++r) {
    if (sameCall(all[0], all[r])) continue;
    const CallFingerprint& first = all[0];
    const CallFingerprint& other = all[r];
    const std::string groups =
        first.groupSize == other.groupSize
            ? std::string()
            : " (rank 0's group has " + std::to_string(first.groupSize) +
                  " collectives on this communicator, rank " +
                  std::to_string(r) + "'s " + std::to_string(other.groupSize) +
                  ")";
    // Numbered from 1 in messages, as people count calls.
    throw error(mclInvalidUsage,
                "%s: MCL_CHECK: collective #%llu on this communicator differs "
                "across ranks: rank 0 calls %s, rank %zu calls %s%s",
                label.c_str(), static_cast<unsigned long long>(first.call + 1),
                describeCall(first).c_str(), r, describeCall(other).c_str(),
                groups.c_str());
  }
}

}  // namespace mcl
