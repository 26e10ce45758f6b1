#include "platform/shared_memory.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "platform/system_error.h"

namespace mcl::platform {

namespace {

constexpr size_t kMaxNameLength = 30;

void checkName(const std::string& name) {
  if (name.size() < 2 || name[0] != '/' || name.size() > kMaxNameLength)
    throw std::invalid_argument("shared memory name '" + name +
                                "' must start with '/' and be at most 30 "
                                "characters");
}

// Why a segment (its fstat) is not this user's alone, or "" when it is.
std::string whyNotOurs(const struct stat& st) {
  if (st.st_uid != geteuid())
    return "is owned by uid " + std::to_string(st.st_uid) +
           ", not this user (uid " + std::to_string(geteuid()) +
           "): another user created it";
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o",
                  static_cast<unsigned>(st.st_mode & 07777));
    return std::string("has mode ") + mode +
           ": open to other users (mcl makes its segments 0600)";
  }
  return "";
}

// The status of a segment just opened (fd), once it is known to be this
// user's alone; fd is closed when it is not.
struct stat ownStatus(int fd, const std::string& name) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    throwSystemError("fstat of shared memory " + name, err);
  }
  const std::string why = whyNotOurs(st);
  if (!why.empty()) {
    close(fd);
    throw ForeignSegment("shared memory " + name + " " + why);
  }
  return st;
}

// Maps every page of [p, p + bytes) by reading one byte of each.
void touchPages(const void* p, size_t bytes) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  volatile const char* in = static_cast<const char*>(p);
  for (size_t at = 0; at < bytes; at += page) (void)in[at];
}

void* mapFd(int fd, size_t bytes, const std::string& name,
            bool populate = false) {
  int flags = MAP_SHARED;
#if defined(MAP_POPULATE)
  if (populate) flags |= MAP_POPULATE;
#endif
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, flags, fd, 0);
  if (p == MAP_FAILED) throwSystemError("mmap of shared memory " + name);
#if !defined(MAP_POPULATE)
  if (populate) touchPages(p, bytes);  // macOS has no MAP_POPULATE
#endif
  return p;
}

}  // namespace

SharedMemoryRoom sharedMemoryRoom() {
  SharedMemoryRoom room;
#if defined(__linux__)
  room.where = "/dev/shm";
  struct statvfs fs;
  if (statvfs(room.where, &fs) == 0) {
    room.known = true;
    room.freeBytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
    room.totalBytes = static_cast<uint64_t>(fs.f_blocks) * fs.f_frsize;
  }
#endif
  return room;
}

std::vector<SegmentEntry> listSegments(const std::string& prefix) {
  std::vector<SegmentEntry> found;
#if defined(__linux__)
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return found;
  while (const dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    struct stat st;
    if (fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode))
      continue;
    found.push_back({"/" + name, static_cast<uint64_t>(st.st_size),
                     st.st_uid == geteuid()});
  }
  closedir(dir);
#else
  (void)prefix;
#endif
  return found;
}

SharedMemory::SharedMemory(SharedMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

SharedMemory& SharedMemory::operator=(SharedMemory&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

SharedMemory::~SharedMemory() { release(); }

void SharedMemory::release() {
  if (data_ != nullptr) munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

SharedMemory SharedMemory::create(const std::string& name, size_t bytes,
                                  bool reserve) {
  checkName(name);
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) throwSystemError("shm_open(create) of " + name);
  struct stat st;
  try {
    st = ownStatus(fd, name);
  } catch (...) {
    shm_unlink(name.c_str());
    throw;
  }
  // The umask only takes bits away, so group and others have none; one
  // that took the owner's would keep the peers (this user too) out.
  if ((st.st_mode & 0777) != 0600 && fchmod(fd, 0600) != 0) {
    int err = errno;
    close(fd);
    shm_unlink(name.c_str());
    throwSystemError("fchmod 0600 of shared memory " + name, err);
  }
  int failed = ftruncate(fd, static_cast<off_t>(bytes)) != 0 ? errno : 0;
#if defined(__linux__)
  if (failed == 0 && reserve) {
    // Not when the room is plainly missing: a reservation that fails half
    // way holds pages until it gives them back, and a peer that touches
    // its own pages in that moment dies of SIGBUS.
    struct statvfs fs;
    if (fstatvfs(fd, &fs) == 0 &&
        static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize < bytes)
      failed = ENOSPC;
    while (failed == 0 && (failed = posix_fallocate(
                               fd, 0, static_cast<off_t>(bytes))) == EINTR)
      failed = 0;
  }
#else
  (void)reserve;  // macOS backs shared memory with ordinary pages
#endif
  if (failed != 0) {
    int err = failed;
    close(fd);
    shm_unlink(name.c_str());
    errno = err;
    throwSystemError("sizing shared memory " + name + " to " +
                     std::to_string(bytes) + " bytes");
  }
  SharedMemory seg;
  try {
    seg.data_ = mapFd(fd, bytes, name, reserve);
  } catch (...) {
    close(fd);
    shm_unlink(name.c_str());
    throw;
  }
  seg.size_ = bytes;
  close(fd);
  return seg;
}

SharedMemory SharedMemory::open(const std::string& name, bool populate) {
  checkName(name);
  int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) throwSystemError("shm_open of " + name);
  const struct stat st = ownStatus(fd, name);
  SharedMemory seg;
  try {
    seg.data_ = mapFd(fd, static_cast<size_t>(st.st_size), name, populate);
  } catch (...) {
    close(fd);
    throw;
  }
  seg.size_ = static_cast<size_t>(st.st_size);
  close(fd);
  return seg;
}

SharedMemory SharedMemory::createPrivate(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throwSystemError("mmap of " + std::to_string(bytes) +
                     " bytes of private memory");
  SharedMemory seg;
  seg.data_ = p;
  seg.size_ = bytes;
  return seg;
}

void SharedMemory::populate() const { touchPages(data_, size_); }

void SharedMemory::unlink(const std::string& name) { shm_unlink(name.c_str()); }

bool SharedMemory::exists(const std::string& name) {
  int fd = shm_open(name.c_str(), O_RDONLY, 0600);
  if (fd < 0) return errno != ENOENT;
  close(fd);
  return true;
}

}  // namespace mcl::platform
