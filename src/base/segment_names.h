// Names of mcl's shared-memory segments, and segments created under them.
// A name is random (64 bits from libsodium) so that no other local user can
// guess it and create it first: a user who watches /dev/shm sees a name
// only once it is taken. Creation is exclusive and 0600, so a name that
// exists anyway is a collision to retry under another name, never a
// segment to share. The name still says whose it is, for the sweep of
// leftovers of killed processes (core/init/leftover_segments.h):
//
//   "/mcl-<kind><pid>-<16 base-32 digits>"
//
// the digits holding 16 bits of the creator's pid namespace, then the 64
// random bits. A Linux pid has at most 7 digits, so a name has at most 30
// characters: macOS' limit.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "platform/shared_memory.h"

namespace mcl {

// What a segment holds: the letter after "/mcl-".
enum class SegmentKind : char {
  Rings = 'r',       // a rank's shared-memory rings (transports/shm)
  Allocation = 'm',  // mclMemAlloc memory
};

// A new random name for a segment of this process.
std::string newSegmentName(SegmentKind kind);

// What a name says of the process that made it.
struct SegmentCreator {
  int pid = 0;
  bool inThisPidNamespace = false;  // else its pid means nothing here
};
// False when `name` is not one newSegmentName makes for `kind`.
bool segmentCreator(const std::string& name, SegmentKind kind,
                    SegmentCreator* creator);

struct NamedSegment {
  platform::SharedMemory memory;
  std::string name;
};

// Names taken before a creation gives up: one collision of random names is
// all but impossible, several mean someone creates them on purpose.
constexpr int kSegmentNameAttempts = 8;

// SharedMemory::create under a name from newName, taking another while the
// name exists already. Throws std::system_error: the OS's error of the
// last attempt, or EEXIST once every name collided, saying so.
NamedSegment createUnderFreshName(const std::function<std::string()>& newName,
                                  size_t bytes, bool reserve);
// The same, with newSegmentName(kind).
NamedSegment createNamedSegment(SegmentKind kind, size_t bytes, bool reserve);

}  // namespace mcl
