// Segments that killed processes left in /dev/shm are removed by the next
// init on the host, with an INFO line each: mclMemAlloc memory of a
// process killed before it freed it, and a rank's ring segment left by a
// process killed during init. Segments whose owner lives, or whose owner's
// pid belongs to another pid namespace, stay. Linux only (macOS cannot
// list POSIX shared-memory names).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "multiprocess.h"
#include "transports/shm/shm_layout.h"

#if defined(__linux__)
namespace mcl::test {
namespace {

namespace fs = std::filesystem;

bool inDevShm(const std::string& name) {
  return fs::exists(fs::path("/dev/shm") / name);
}

uint64_t myPidNamespace() {
  struct stat st {};
  return stat("/proc/self/ns/pid", &st) == 0 ? st.st_ino : 0;
}

// A process that allocates 1 MiB with mclMemAlloc and is killed: its
// segment's name, which stays in /dev/shm.
std::string killedAllocation() {
  int pipeFds[2];
  if (pipe(pipeFds) != 0) return "";
  const pid_t child = fork();
  if (child == 0) {
    void* p = nullptr;
    char name[64] = {};
    if (mclMemAlloc(&p, 1 << 20) == mclSuccess)
      std::snprintf(name, sizeof(name), "mcl-m%d-", getpid());
    if (write(pipeFds[1], name, sizeof(name)) < 0) _exit(1);
    pause();  // killed here, before any mclMemFree or exit handler
    _exit(0);
  }
  char prefix[64] = {};
  const bool read = ::read(pipeFds[0], prefix, sizeof(prefix)) > 0;
  close(pipeFds[0]);
  close(pipeFds[1]);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  if (!read || prefix[0] == 0) return "";
  for (const auto& e : fs::directory_iterator("/dev/shm"))
    if (e.path().filename().string().rfind(prefix, 0) == 0)
      return e.path().filename().string();
  return "";
}

// A ring segment's name as mcl makes them (base/segment_names.h, not
// exported): "mcl-r<pid>-" then 16 base-32 digits, the first four holding
// 16 bits of the pid namespace, the rest random (here, a count).
std::string ringsName(uint64_t pidNamespace) {
  static const char digits[] = "0123456789abcdefghijklmnopqrstuv";
  static unsigned made = 0;
  std::string name = "mcl-r" + std::to_string(getpid()) + "-";
  const uint64_t head = (pidNamespace & 0xffffu) << 4;
  for (int i = 3; i >= 0; --i) name += digits[(head >> (5 * i)) & 31u];
  const uint64_t tail = ++made;
  for (int i = 11; i >= 0; --i) name += digits[(tail >> (5 * i)) & 31u];
  return name;
}

// A ring segment as a rank writes it before its peers map it, owned by a
// process that then ends (killed during init): its name. Its header says
// which pid namespace the owner's pid belongs to.
std::string abandonedRings(uint64_t pidNamespace) {
  const std::string name = ringsName(myPidNamespace());
  const pid_t child = fork();
  if (child == 0) {
    const int fd =
        shm_open(("/" + name).c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || ftruncate(fd, 1 << 16) != 0) _exit(1);
    void* p = mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) _exit(1);
    auto* header = static_cast<transport::shm::SegmentHeader*>(p);
    header->magic = transport::shm::kSegmentMagic;
    header->ownerPid = static_cast<uint32_t>(getpid());
    header->ownerPidNamespace = pidNamespace;
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? name : "";
}

std::string readAll(const fs::path& dir) {
  std::string all;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path());
    std::stringstream s;
    s << in.rdbuf();
    all += s.str();
  }
  return all;
}

void leftoversAreRemoved() {
  const std::string allocation = killedAllocation();
  ASSERT_FALSE(allocation.empty());
  ASSERT_TRUE(inDevShm(allocation));
  const std::string rings = abandonedRings(myPidNamespace());
  ASSERT_FALSE(rings.empty());
  // Another pid namespace's: its pid means nothing here, so it stays.
  const std::string foreign = abandonedRings(myPidNamespace() + 1);
  ASSERT_FALSE(foreign.empty());
  // A live owner's (this process's own allocation) stays too.
  void* mine = nullptr;
  ASSERT_EQ(mclMemAlloc(&mine, 4096), mclSuccess);

  const fs::path logs =
      fs::temp_directory_path() / ("mcl-leftovers-" + std::to_string(getpid()));
  fs::remove_all(logs);
  fs::create_directories(logs);
  const pid_t job = fork();
  ASSERT_GE(job, 0);
  if (job == 0) {
    setenv("MCL_DEBUG", "INFO", 1);
    setenv("MCL_DEBUG_SUBSYS", "SHM", 1);
    setenv("MCL_DEBUG_FILE", (logs / "rank.%p").c_str(), 1);
    const bool ok = runRanks(2, [](RankContext& ctx) {
      mclComm_t comm = initComm(ctx, 30);
      if (comm != nullptr) ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
    });
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(job, &status, 0), job);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  EXPECT_FALSE(inDevShm(allocation));
  EXPECT_FALSE(inDevShm(rings));
  EXPECT_TRUE(inDevShm(foreign));
  const std::string log = readAll(logs);
  EXPECT_NE(log.find("removed /dev/shm/" + allocation +
                     " (mclMemAlloc memory, 1.0 MiB) that process"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("removed /dev/shm/" + rings + " (shared-memory rings"),
            std::string::npos)
      << log;
  EXPECT_EQ(mclMemFree(mine), mclSuccess);  // still there to free
  shm_unlink(("/" + foreign).c_str());
  fs::remove_all(logs);
}

TEST(LeftoverSegments, TheNextInitRemovesWhatKilledProcessesLeft) {
  // In a /dev/shm of its own: another test's init would sweep the
  // leftovers first (and log it there).
  if (geteuid() != 0) GTEST_SKIP() << "needs root for a mount namespace";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (unshare(CLONE_NEWNS) != 0 ||
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=64m") != 0)
      _exit(77);
    leftoversAreRemoved();
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "no mount namespace here";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the failures above";
}

}  // namespace
}  // namespace mcl::test
#endif
