// Tests for the refusal of shared-memory segments that are not this user's
// alone (platform/shared_memory.h): one open to group or others, or owned
// by another user (who may have created it first under the name a rank
// meant to use). Ranks that refuse a peer's segment name the peer; and what
// mcl creates is 0600 whatever the umask.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <utility>

#include "algorithms/shared_buffers.h"
#include "base/error.h"
#include "base/segment_names.h"
#include "core/comm/peer_segments.h"
#include "platform/shared_memory.h"
#include "transports/shm/shm_options.h"
#include "transports/shm/shm_segments.h"

namespace mcl {
namespace {

// A segment made directly with shm_open, as another user (or an older
// tool) would, removed when the test ends.
class HandMadeSegment {
 public:
  HandMadeSegment(SegmentKind kind, mode_t mode) : name_(newSegmentName(kind)) {
    const int fd = shm_open(name_.c_str(), O_RDWR | O_CREAT | O_EXCL, mode);
    if (fd < 0) return;
    // fchmod: the umask may have taken bits the test wants.
    made_ = ftruncate(fd, 4096) == 0 && fchmod(fd, mode) == 0;
    fd_ = fd;
  }
  ~HandMadeSegment() {
    if (fd_ >= 0) close(fd_);
    shm_unlink(name_.c_str());
  }
  HandMadeSegment(const HandMadeSegment&) = delete;
  HandMadeSegment& operator=(const HandMadeSegment&) = delete;

  // Gives it to another user (root only).
  bool giveTo(uid_t uid) { return fchown(fd_, uid, uid) == 0; }

  const std::string& name() const { return name_; }
  bool made() const { return made_; }

 private:
  std::string name_;
  int fd_ = -1;
  bool made_ = false;
};

// The text of the ForeignSegment that opening `name` throws, or "".
std::string refusalOf(const std::string& name) {
  try {
    platform::SharedMemory::open(name);
  } catch (const platform::ForeignSegment& e) {
    return e.what();
  }
  return "";
}

transport::shm::ShmOptions smallRingOptions() {
  transport::shm::ShmOptions o;
  o.slots = 2;
  o.slotBytes = 1024;
  return o;
}

TEST(SharedMemoryOwner, ASegmentOpenToOthersIsRefused) {
  const HandMadeSegment open(SegmentKind::Rings, 0644);
  ASSERT_TRUE(open.made());
  const std::string why = refusalOf(open.name());
  EXPECT_NE(why.find("shared memory " + open.name() + " has mode 0644"),
            std::string::npos)
      << why;
  const HandMadeSegment groupOnly(SegmentKind::Rings, 0660);
  ASSERT_TRUE(groupOnly.made());
  EXPECT_NE(refusalOf(groupOnly.name()), "");
  const HandMadeSegment ours(SegmentKind::Rings, 0600);
  ASSERT_TRUE(ours.made());
  EXPECT_EQ(refusalOf(ours.name()), "");
}

TEST(SharedMemoryOwner, AnotherUsersSegmentIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "only root can give a segment away";
  HandMadeSegment theirs(SegmentKind::Rings, 0600);
  ASSERT_TRUE(theirs.made());
  ASSERT_TRUE(theirs.giveTo(65534));
  const std::string why = refusalOf(theirs.name());
  EXPECT_NE(why.find("shared memory " + theirs.name() +
                     " is owned by uid 65534, not this user (uid 0): "
                     "another user created it"),
            std::string::npos)
      << why;
}

TEST(SharedMemoryOwner, ARankNamesThePeerWhoseRingsItRefuses) {
  transport::shm::ShmSegments mine(
      0, {0, 1}, transport::shm::RingMemory::Shared, smallRingOptions());
  const HandMadeSegment peers(SegmentKind::Rings, 0644);
  ASSERT_TRUE(peers.made());
  try {
    mine.mapPeer(1, peers.name(), getpid());
    ADD_FAILURE() << "mapped " << peers.name();
  } catch (const Error& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("rank 0: cannot map rank 1's shared-memory segment " +
                        peers.name()),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("mode 0644"), std::string::npos) << text;
  }
}

TEST(SharedMemoryOwner, ARankNamesThePeerWhoseMemoryItRefuses) {
  PeerSegments segments(0);
  const HandMadeSegment peers(SegmentKind::Allocation, 0644);
  ASSERT_TRUE(peers.made());
  SharedBufferRef ref;
  peers.name().copy(ref.segment, sizeof(ref.segment) - 1);
  ref.segmentBytes = 4096;
  try {
    segments.map(2, ref, 64);
    ADD_FAILURE() << "mapped " << peers.name();
  } catch (const Error& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("rank 0 cannot map rank 2's mclMemAlloc memory " +
                        peers.name()),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("mode 0644"), std::string::npos) << text;
    EXPECT_EQ(text.find("freed already"), std::string::npos) << text;
  }
}

// The mode of a segment, as the file system has it.
mode_t modeOf(const std::string& name) {
  const int fd = shm_open(name.c_str(), O_RDONLY, 0);
  struct stat st {};
  const bool known = fd >= 0 && fstat(fd, &st) == 0;
  if (fd >= 0) close(fd);
  return known ? st.st_mode & 07777 : 0;
}

TEST(SharedMemoryOwner, WhatMclCreatesIsTheOwnersAloneWhateverTheUmask) {
  for (const mode_t mask : {mode_t{0}, mode_t{022}, mode_t{0277}}) {
    const mode_t before = umask(mask);
    NamedSegment made = createNamedSegment(SegmentKind::Rings, 4096, false);
    umask(before);
    EXPECT_EQ(modeOf(made.name), 0600u) << "umask " << mask;
    EXPECT_EQ(refusalOf(made.name), "") << "umask " << mask;
    platform::SharedMemory::unlink(made.name);
  }
}

}  // namespace
}  // namespace mcl
