// Tests for shared-memory segment names (base/segment_names.h): random for
// every segment, within macOS' 30 characters, and still saying whose they
// are for the sweep of leftovers; creation that takes a new name when one
// exists already, never the segment under it; and the sweep, which still
// finds what a dead process left.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "algorithms/shared_buffers.h"
#include "base/segment_names.h"
#include "core/comm/shared_allocations.h"
#include "core/init/leftover_segments.h"
#include "platform/shared_memory.h"
#include "transports/shm/shm_options.h"
#include "transports/shm/shm_segments.h"

namespace mcl {
namespace {

using transport::shm::RingMemory;
using transport::shm::ShmSegments;

// Removes a name when the test ends, whatever became of it.
class UnlinkedAtEnd {
 public:
  explicit UnlinkedAtEnd(std::string name) : name_(std::move(name)) {}
  ~UnlinkedAtEnd() { platform::SharedMemory::unlink(name_); }
  UnlinkedAtEnd(const UnlinkedAtEnd&) = delete;
  UnlinkedAtEnd& operator=(const UnlinkedAtEnd&) = delete;

 private:
  std::string name_;
};

transport::shm::ShmOptions smallRings() {
  transport::shm::ShmOptions o;
  o.slots = 2;
  o.slotBytes = 1024;
  return o;
}

std::string allocationName(void* base) {
  SharedBufferRef ref;
  if (!findShared(base, 1, &ref)) return "";
  return ref.segment;
}

TEST(SegmentNames, AreRandomAndSayTheirKindAndPid) {
  const std::string pid = std::to_string(getpid());
  const std::string a = newSegmentName(SegmentKind::Rings);
  const std::string b = newSegmentName(SegmentKind::Rings);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.rfind("/mcl-r" + pid + "-", 0), 0u) << a;
  const std::string m = newSegmentName(SegmentKind::Allocation);
  EXPECT_EQ(m.rfind("/mcl-m" + pid + "-", 0), 0u) << m;
  // With Linux' longest pid (7 digits), still within macOS' 30 characters.
  EXPECT_LE(a.size() - pid.size() + 7, 30u) << a;
}

TEST(SegmentNames, SayWhoseTheyAre) {
  SegmentCreator creator;
  ASSERT_TRUE(segmentCreator(newSegmentName(SegmentKind::Allocation),
                             SegmentKind::Allocation, &creator));
  EXPECT_EQ(creator.pid, getpid());
  EXPECT_TRUE(creator.inThisPidNamespace);
  EXPECT_FALSE(segmentCreator(newSegmentName(SegmentKind::Rings),
                              SegmentKind::Allocation, &creator));
  // Names of older mcl versions, of the emulated fabric, and damaged ones.
  for (const char* other :
       {"/mcl-0123456789abcdef-1", "/mcl-m123-00011abcde5",
        "/mcl-e-0000000001-0-1", "/mcl-m0-0000000000000000",
        "/mcl-m-0000000000000000", "/mcl-m12x-0000000000000000",
        "/mcl-m12-000000000000000w", "/mcl-m12-00000000000000000",
        "/mcl-m12345678-0000000000000000", "/mcl-m", "/other"})
    EXPECT_FALSE(segmentCreator(other, SegmentKind::Allocation, &creator))
        << other;
}

TEST(SegmentNames, AnotherPidNamespacesNameIsNotJudgedHere) {
  std::string name = newSegmentName(SegmentKind::Allocation);
  // The first digit after the pid holds the top of the namespace's mark.
  const size_t mark = name.find('-', 5) + 1;
  name[mark] = name[mark] == '0' ? '1' : '0';
  SegmentCreator creator;
  ASSERT_TRUE(segmentCreator(name, SegmentKind::Allocation, &creator));
  EXPECT_FALSE(creator.inThisPidNamespace);
}

TEST(SegmentNames, TwoRingSegmentsOfOneRankDiffer) {
  ShmSegments first(0, {0, 1}, RingMemory::Shared, smallRings());
  ShmSegments second(0, {0, 1}, RingMemory::Shared, smallRings());
  EXPECT_NE(first.segmentName(), second.segmentName());
  SegmentCreator creator;
  EXPECT_TRUE(segmentCreator(first.segmentName(), SegmentKind::Rings, &creator))
      << first.segmentName();
  ShmSegments alone(0, {0}, RingMemory::Private, smallRings());
  EXPECT_EQ(alone.segmentName(), "");
}

TEST(SegmentNames, TwoAllocationsDiffer) {
  void* a = allocateShared(4096);
  void* b = allocateShared(4096);
  const std::string nameA = allocationName(a);
  const std::string nameB = allocationName(b);
  EXPECT_NE(nameA, nameB);
  SegmentCreator creator;
  EXPECT_TRUE(segmentCreator(nameA, SegmentKind::Allocation, &creator))
      << nameA;
  freeShared(a);
  freeShared(b);
}

TEST(SegmentCreation, ANameTakenFirstIsReplacedNotShared) {
  const std::string taken = newSegmentName(SegmentKind::Allocation);
  const UnlinkedAtEnd takenGone(taken);
  // Made first, as another process would, and written to.
  platform::SharedMemory first = platform::SharedMemory::create(taken, 4096);
  static_cast<char*>(first.data())[0] = 42;
  try {
    platform::SharedMemory::create(taken, 4096);
    ADD_FAILURE() << "created " << taken << " twice";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), EEXIST) << e.what();
  }
  const std::vector<std::string> offered = {
      taken, newSegmentName(SegmentKind::Allocation)};
  size_t asked = 0;
  NamedSegment made = createUnderFreshName(
      [&] { return offered[asked++ % offered.size()]; }, 4096, false);
  const UnlinkedAtEnd madeGone(made.name);
  EXPECT_EQ(asked, 2u);
  EXPECT_EQ(made.name, offered[1]);
  EXPECT_EQ(static_cast<char*>(made.memory.data())[0], 0)
      << "a segment of its own, zero-filled";
  EXPECT_EQ(static_cast<char*>(first.data())[0], 42);
}

TEST(SegmentCreation, NamesThatKeepCollidingSaySo) {
  const std::string taken = newSegmentName(SegmentKind::Rings);
  const UnlinkedAtEnd takenGone(taken);
  const platform::SharedMemory first =
      platform::SharedMemory::create(taken, 4096);
  int asked = 0;
  try {
    createUnderFreshName(
        [&] {
          ++asked;
          return taken;
        },
        4096, false);
    ADD_FAILURE() << "created " << taken << " twice";
  } catch (const std::system_error& e) {
    const std::string text = e.what();
    EXPECT_EQ(e.code().value(), EEXIST) << text;
    EXPECT_NE(text.find("names keep colliding"), std::string::npos) << text;
    EXPECT_NE(text.find("another user"), std::string::npos) << text;
    EXPECT_NE(text.find(taken), std::string::npos) << text;
    EXPECT_EQ(text.find("full"), std::string::npos) << text;
  }
  EXPECT_EQ(asked, kSegmentNameAttempts);
}

// A child that makes ring segments and mclMemAlloc memory and exits
// without removing their names (as if killed): the names, by pipe.
struct LeftBehind {
  pid_t pid = 0;
  std::string rings;
  std::string allocation;
};
LeftBehind leftByADeadProcess() {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t child = fork();
  if (child == 0) {
    char names[2][32] = {};
    try {
      // Never destroyed: its name stays.
      auto* rings =
          new ShmSegments(0, {0, 1}, RingMemory::Shared, smallRings());
      std::strncpy(names[0], rings->segmentName().c_str(), 31);
      std::strncpy(names[1], allocationName(allocateShared(4096)).c_str(), 31);
    } catch (...) {
      _exit(1);
    }
    _exit(write(fds[1], names, sizeof(names)) == sizeof(names) ? 0 : 1);
  }
  close(fds[1]);
  char names[2][32] = {};
  const bool read = ::read(fds[0], names, sizeof(names)) == sizeof(names);
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!read || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  return {child, names[0], names[1]};
}

TEST(LeftoverSweep, FindsAndRemovesWhatADeadProcessLeft) {
  const LeftBehind left = leftByADeadProcess();
  ASSERT_FALSE(left.rings.empty());
  ASSERT_FALSE(left.allocation.empty());
  const UnlinkedAtEnd ringsGone(left.rings);
  const UnlinkedAtEnd allocationGone(left.allocation);
  ASSERT_TRUE(platform::SharedMemory::exists(left.rings));
  ASSERT_TRUE(platform::SharedMemory::exists(left.allocation));
  int owner = 0;
  EXPECT_TRUE(transport::shm::ringSegmentAbandoned(left.rings, &owner));
  EXPECT_EQ(owner, left.pid);
  owner = 0;
  EXPECT_TRUE(allocationAbandoned(left.allocation, &owner));
  EXPECT_EQ(owner, left.pid);

  // This live process's own are not.
  const ShmSegments mine(0, {0, 1}, RingMemory::Shared, smallRings());
  void* memory = allocateShared(4096);
  EXPECT_FALSE(
      transport::shm::ringSegmentAbandoned(mine.segmentName(), &owner));
  EXPECT_FALSE(allocationAbandoned(allocationName(memory), &owner));

  // Swept by a process that has not swept yet (one sweep per 10 s each).
  const pid_t sweeper = fork();
  if (sweeper == 0) {
    removeLeftoverSegments();
    _exit(0);
  }
  int status = 0;
  waitpid(sweeper, &status, 0);
  EXPECT_FALSE(platform::SharedMemory::exists(left.rings));
  EXPECT_FALSE(platform::SharedMemory::exists(left.allocation));
  EXPECT_TRUE(platform::SharedMemory::exists(mine.segmentName()));
  EXPECT_TRUE(platform::SharedMemory::exists(allocationName(memory)));
  freeShared(memory);
}

}  // namespace
}  // namespace mcl
