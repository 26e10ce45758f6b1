#include "base/segment_names.h"

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <system_error>

#include "base/auth.h"
#include "platform/host_identity.h"
#include "platform/shared_memory.h"
#include "platform/system_error.h"

namespace mcl {

namespace {

constexpr char kPrefix[] = "/mcl-";
constexpr size_t kPrefixLength = sizeof(kPrefix) - 1;
constexpr size_t kMaxPidDigits = 7;  // Linux' pid_max is at most 2^22
// Base 32, lower case: a name reads the same on every file system.
constexpr char kBase32Digits[] = "0123456789abcdefghijklmnopqrstuv";
// 20 bits: the pid namespace's 16, then the random number's top 4.
constexpr size_t kHeadDigits = 4;
// 60 bits: the rest of the random number.
constexpr size_t kTailDigits = 12;
constexpr uint64_t kTailMask = (uint64_t{1} << 60) - 1;

// 16 bits of this process's pid namespace: whether a sweep may judge the
// pid in a name (containers may share /dev/shm, not pids).
uint64_t pidNamespaceMark() { return platform::pidNamespace() & 0xffffu; }

void appendBase32(std::string* out, uint64_t value, size_t digits) {
  for (size_t i = digits; i-- > 0;)
    out->push_back(kBase32Digits[(value >> (5 * i)) & 31u]);
}

// The number `digits` base-32 digits of text hold from `at`, or false.
bool readBase32(const std::string& text, size_t at, size_t digits,
                uint64_t* value) {
  *value = 0;
  for (size_t i = at; i < at + digits; ++i) {
    const char c = text[i];
    uint64_t digit = 0;
    if (c >= '0' && c <= '9')
      digit = static_cast<uint64_t>(c - '0');
    else if (c >= 'a' && c <= 'v')
      digit = static_cast<uint64_t>(c - 'a') + 10;
    else
      return false;
    *value = *value << 5 | digit;
  }
  return true;
}

}  // namespace

std::string newSegmentName(SegmentKind kind) {
  const uint64_t random = randomU64();
  std::string name = kPrefix;
  name += static_cast<char>(kind);
  name += std::to_string(getpid());
  name += '-';
  appendBase32(&name, pidNamespaceMark() << 4 | random >> 60, kHeadDigits);
  appendBase32(&name, random & kTailMask, kTailDigits);
  return name;
}

bool segmentCreator(const std::string& name, SegmentKind kind,
                    SegmentCreator* creator) {
  if (name.compare(0, kPrefixLength, kPrefix) != 0 ||
      name.size() <= kPrefixLength ||
      name[kPrefixLength] != static_cast<char>(kind))
    return false;
  const size_t pidAt = kPrefixLength + 1;
  const size_t dash = name.find('-', pidAt);
  if (dash == std::string::npos || dash == pidAt ||
      dash - pidAt > kMaxPidDigits || name[pidAt] == '0' ||
      name.size() != dash + 1 + kHeadDigits + kTailDigits)
    return false;
  int pid = 0;
  for (size_t i = pidAt; i < dash; ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    pid = pid * 10 + (name[i] - '0');
  }
  uint64_t head = 0;
  uint64_t tail = 0;
  if (!readBase32(name, dash + 1, kHeadDigits, &head) ||
      !readBase32(name, dash + 1 + kHeadDigits, kTailDigits, &tail))
    return false;
  creator->pid = pid;
  creator->inThisPidNamespace = (head >> 4) == pidNamespaceMark();
  return true;
}

NamedSegment createUnderFreshName(const std::function<std::string()>& newName,
                                  size_t bytes, bool reserve) {
  std::string last;
  for (int attempt = 0; attempt < kSegmentNameAttempts; ++attempt) {
    NamedSegment segment;
    segment.name = newName();
    try {
      segment.memory =
          platform::SharedMemory::create(segment.name, bytes, reserve);
      return segment;
    } catch (const std::system_error& e) {
      if (e.code().value() != EEXIST) throw;
      last = segment.name;
    }
  }
  platform::throwSystemError(
      "creating a shared-memory segment: names keep colliding, " +
          std::to_string(kSegmentNameAttempts) +
          " random names in a row existed already (the last " + last +
          "), which chance all but never does: another user of this host "
          "may be creating them first",
      EEXIST);
}

NamedSegment createNamedSegment(SegmentKind kind, size_t bytes, bool reserve) {
  return createUnderFreshName([kind] { return newSegmentName(kind); }, bytes,
                              reserve);
}

}  // namespace mcl
