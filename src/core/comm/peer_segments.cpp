#include "core/comm/peer_segments.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <utility>

#include "base/error.h"
#include "base/segment_names.h"
#include "core/comm/shared_allocations.h"

namespace mcl {

namespace {

// Segments kept mapped at most: a bound on the mappings, whatever their
// owners do.
constexpr size_t kMaxMappedSegments = 64;

}  // namespace

bool PeerSegments::find(const void* data, size_t bytes,
                        SharedBufferRef* ref) const {
  return findShared(data, bytes, ref);
}

void PeerSegments::evictUnused(bool all) {
  for (auto it = segments_.begin(); it != segments_.end();) {
    // Segments of this call stay; so do others whose owner still has them
    // (unless over the bound): freed memory lives on while we map it.
    if (it->second.lastCall == call_ ||
        (!all && platform::SharedMemory::exists(it->first))) {
      ++it;
      continue;
    }
    mappedBytes_.fetch_sub(it->second.memory.size(), std::memory_order_relaxed);
    it = segments_.erase(it);
  }
}

std::byte* PeerSegments::map(int peer, const SharedBufferRef& ref,
                             size_t bytes) {
  const std::string name(ref.segment, strnlen(ref.segment, sizeof ref.segment));
  SegmentCreator creator;
  if (!segmentCreator(name, SegmentKind::Allocation, &creator))
    throw error(mclRemoteError,
                "rank %d: rank %d named \"%s\" as its buffer's segment, not "
                "an mclMemAlloc segment",
                rank_, peer, name.c_str());
  auto it = segments_.find(name);
  if (it == segments_.end()) {
    // A new segment: a good time to let go of those their owners freed
    // (a program that allocates anew for every call).
    evictUnused(segments_.size() >= kMaxMappedSegments);
    Mapped m;
    try {
      m.memory = platform::SharedMemory::open(name, true);
    } catch (const platform::ForeignSegment& e) {
      throw error(mclSystemError,
                  "rank %d cannot map rank %d's mclMemAlloc memory %s: %s",
                  rank_, peer, name.c_str(), e.what());
    } catch (const std::exception& e) {
      throw error(mclSystemError,
                  "rank %d cannot map rank %d's mclMemAlloc memory %s: %s "
                  "(freed already?)",
                  rank_, peer, name.c_str(), e.what());
    }
    mappedBytes_.fetch_add(m.memory.size(), std::memory_order_relaxed);
    it = segments_.emplace(name, std::move(m)).first;
  }
  it->second.lastCall = call_;
  const uint64_t size = it->second.memory.size();
  if (ref.offset > size || bytes > size - ref.offset)
    throw error(mclRemoteError,
                "rank %d: rank %d's buffer (%zu bytes at offset %llu) passes "
                "the end of its segment %s (%llu bytes)",
                rank_, peer, bytes, static_cast<unsigned long long>(ref.offset),
                name.c_str(), static_cast<unsigned long long>(size));
  return static_cast<std::byte*>(it->second.memory.data()) + ref.offset;
}

void PeerSegments::noteInPlaceCall() {
  inPlaceCalls_.fetch_add(1, std::memory_order_relaxed);
  ++call_;
}

}  // namespace mcl
