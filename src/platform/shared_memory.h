// Named shared-memory segments (POSIX shm_open + mmap, on Linux and macOS).
// A segment is created by one process, opened by its peers by name, then
// unlinked once everyone has mapped it, so a crash leaves nothing behind in
// /dev/shm after init.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace mcl::platform {

// Where shared-memory segments live and how much room is left there. On
// Linux, /dev/shm: a tmpfs whose size bounds every segment (Docker gives
// containers 64 MiB), and a page it cannot supply is a SIGBUS at first
// touch. On macOS, POSIX shared memory is ordinary pageable memory with no
// such bound: known is false.
struct SharedMemoryRoom {
  bool known = false;
  uint64_t freeBytes = 0;   // what an unprivileged process may still take
  uint64_t totalBytes = 0;  // the file system's size
  const char* where = "";   // "/dev/shm", for messages
};
SharedMemoryRoom sharedMemoryRoom();

// A segment's name ("/mcl-...") with what a file system can say of it.
struct SegmentEntry {
  std::string name;
  uint64_t bytes = 0;
  bool ownedByThisUser = false;
};
// The segments whose names start with prefix (after the '/'). Linux lists
// /dev/shm; macOS has no directory of POSIX shared-memory names: empty.
std::vector<SegmentEntry> listSegments(const std::string& prefix);

// A segment that is not this user's alone: owned by another user (who may
// have created it first under the name a rank meant to use), or open to
// group or others. Either could read what ranks exchange in it and write
// into it, so create and open refuse it.
class ForeignSegment : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SharedMemory {
 public:
  SharedMemory() = default;
  SharedMemory(SharedMemory&& other) noexcept;
  SharedMemory& operator=(SharedMemory&& other) noexcept;
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;
  ~SharedMemory();

  // Creates a zero-filled segment, mode 0600; fails (EEXIST) if the name
  // exists, whoever made it: a caller takes another name, it never shares
  // a segment it did not create. Names are at most 30 characters (macOS'
  // limit) and start with '/'. reserve: take the pages now (Linux' tmpfs
  // hands them out on first touch, and a full /dev/shm then kills the
  // process with SIGBUS instead of failing here), and map them at once.
  static SharedMemory create(const std::string& name, size_t bytes,
                             bool reserve = false);
  // Maps an existing segment; its size is the creator's. Throws
  // ForeignSegment when it is not this user's alone. populate: map every
  // page now, not at first touch (a fault per page then would fall on the
  // calls that use it).
  static SharedMemory open(const std::string& name, bool populate = false);
  // Zero-filled memory no other process can name (MAP_ANONYMOUS): for a
  // rank whose rings serve only itself, nothing in /dev/shm.
  static SharedMemory createPrivate(size_t bytes);
  // Removes the name; mappings stay valid. Missing names are not an error.
  static void unlink(const std::string& name);
  // False once the name is removed (its memory lives on while mapped).
  static bool exists(const std::string& name);

  // Maps every page now (they must exist: reserved by the creator).
  void populate() const;

  void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void release();
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace mcl::platform
