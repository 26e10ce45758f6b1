// mclMemAlloc / mclMemFree / mclCommRegister / mclCommDeregister: their
// refusals, the pin registration puts on memory, names removed when memory
// is freed, a peer's memory that cannot be mapped (every rank runs the call
// the usual way), and a peer gone (an error, not a hang).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "expect_error.h"
#include "multiprocess.h"

namespace mcl::test {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kCount = 1 << 16;  // 256 KiB of float: over the threshold

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

#if defined(__linux__)
// /dev/shm names of this process's mclMemAlloc memory (Linux only: macOS
// has no directory of POSIX shared-memory names).
std::vector<std::string> myAllocationNames() {
  std::vector<std::string> names;
  const std::string prefix = "mcl-m" + std::to_string(getpid()) + "-";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0)
      names.push_back(e.path().filename().string());
  return names;
}
#endif

TEST(MemAlloc, RefusesBadArgumentsAndFreesOnce) {
  void* p = nullptr;
  EXPECT_EQ(mclMemAlloc(nullptr, 64), mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("ptr"),
            std::string::npos);
  EXPECT_EQ(mclMemAlloc(&p, 0), mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("size"),
            std::string::npos);
  ASSERT_EQ(mclMemAlloc(&p, 100), mclSuccess);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  const auto* bytes = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < 4096; ++i) ASSERT_EQ(bytes[i], 0) << i;
  std::memset(p, 7, 4096);  // the whole page is usable
  EXPECT_EQ(mclMemFree(static_cast<char*>(p) + 8), mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("mclMemAlloc"),
            std::string::npos);
  EXPECT_EQ(mclMemFree(nullptr), mclInvalidArgument);
  EXPECT_EQ(mclMemFree(p), mclSuccess);
  EXPECT_EQ(mclMemFree(p), mclInvalidArgument);  // freed already
  int local = 0;
  EXPECT_EQ(mclMemFree(&local), mclInvalidArgument);
}

#if defined(__linux__)
TEST(MemAlloc, FreeRemovesTheName) {
  const size_t before = myAllocationNames().size();
  void* p = nullptr;
  ASSERT_EQ(mclMemAlloc(&p, 1 << 20), mclSuccess);
  EXPECT_EQ(myAllocationNames().size(), before + 1);
  ASSERT_EQ(mclMemFree(p), mclSuccess);
  EXPECT_EQ(myAllocationNames().size(), before);
}
#endif

TEST(CommRegister, PinsMemoryUntilDeregisteredOrDestroyed) {
  EXPECT_TRUE(runRanks(2, [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, 30);
    if (comm == nullptr) return;
    void* p = nullptr;
    if (!ctx.ok(mclMemAlloc(&p, 1 << 16), "mclMemAlloc")) return;
    void* handle = nullptr;
    expectError(ctx, mclCommRegister(comm, p, 1 << 16, nullptr),
                mclInvalidArgument, "register, handle NULL", {"handle"});
    expectError(ctx, mclCommRegister(comm, nullptr, 64, &handle),
                mclInvalidArgument, "register, buff NULL", {"buff"});
    expectError(ctx, mclCommRegister(comm, p, 0, &handle), mclInvalidArgument,
                "register, size 0", {"size"});
    expectError(ctx, mclCommRegister(nullptr, p, 64, &handle),
                mclInvalidArgument, "register, comm NULL", {"comm"});
    // Part of the allocation: the whole allocation is pinned.
    if (!ctx.ok(
            mclCommRegister(comm, static_cast<char*>(p) + 4096, 4096, &handle),
            "mclCommRegister"))
      return;
    expectError(ctx, mclMemFree(p), mclInvalidUsage, "free while registered",
                {"registered", "mclCommDeregister"});
    ctx.ok(mclCommDeregister(comm, handle), "mclCommDeregister");
    expectError(ctx, mclCommDeregister(comm, handle), mclInvalidArgument,
                "deregister twice", {"not a registration"});
    int made_up = 0;
    expectError(ctx, mclCommDeregister(comm, &made_up), mclInvalidArgument,
                "deregister a made-up handle", {"not a registration"});
    // Ordinary memory registers too (calls on it copy through the rings).
    std::vector<float> plain(1024);
    void* plainHandle = nullptr;
    ctx.ok(mclCommRegister(comm, plain.data(), plain.size() * 4, &plainHandle),
           "register malloc'd memory");
    ctx.ok(mclCommDeregister(comm, plainHandle), "deregister it");
    // Destroying the communicator releases what it still holds.
    ctx.ok(mclCommRegister(comm, p, 1 << 16, &handle), "register again");
    expectAllReduceWorks(ctx, comm, "all-reduce with memory registered");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
    ctx.ok(mclMemFree(p), "mclMemFree after the communicator went");
  }));
}

#if defined(__linux__)
// Rank 0's memory loses its name before the call: rank 1 cannot map it,
// votes so, and both ranks run the call the usual way, with the right sum.
TEST(ZeroCopy, UnmappablePeerMemoryFallsBackOnEveryRank) {
  EXPECT_TRUE(runRanks(2, [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, 20);
    if (comm == nullptr) return;
    void* p = nullptr;
    if (!ctx.ok(mclMemAlloc(&p, kCount * sizeof(float)), "mclMemAlloc")) return;
    auto* x = static_cast<float*>(p);
    for (size_t i = 0; i < kCount; ++i) x[i] = float(ctx.rank() + 1);
    if (ctx.rank() == 0)
      for (const std::string& name : myAllocationNames())
        shm_unlink(("/" + name).c_str());
    if (!ctx.ok(mclAllReduce(p, p, kCount, mclFloat32, mclSum, comm, nullptr),
                "all-reduce"))
      return;
    for (size_t i = 0; i < kCount; ++i)
      if (x[i] != 3.0f) {
        ctx.fail("element %zu: %g, want 3", i, x[i]);
        break;
      }
    size_t size = 0;
    mclCommGetTopology(comm, nullptr, &size);
    std::string json(size, '\0');
    mclCommGetTopology(comm, json.data(), &size);
    if (json.find("\"zero_copy_calls\": 0") == std::string::npos)
      ctx.fail("the call ran in place: %s", json.c_str());
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
    mclMemFree(p);
  }));
}
#endif

// A peer gone before a zero-copy call: the offers never come, and the
// survivor says which rank left.
TEST(ZeroCopy, ExitedPeerIsReported) {
  EXPECT_TRUE(runRanks(2, [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, 30);
    if (comm == nullptr) return;
    void* p = nullptr;
    if (!ctx.ok(mclMemAlloc(&p, kCount * sizeof(float)), "mclMemAlloc")) return;
    ctx.ok(mclAllReduce(p, p, kCount, mclFloat32, mclSum, comm, nullptr),
           "first all-reduce");
    if (ctx.rank() == 1) {
      mclMemFree(p);  // its name goes; the memory stays mapped by rank 0
      _exit(0);
    }
    const auto start = Clock::now();
    expectError(ctx,
                mclAllReduce(p, p, kCount, mclFloat32, mclSum, comm, nullptr),
                mclRemoteError, "all-reduce with rank 1 gone", {"rank 1"});
    if (secondsSince(start) > 15)
      ctx.fail("the exited peer was noticed after %.1f s", secondsSince(start));
    mclCommDestroy(comm);
    mclMemFree(p);
  }));
}

}  // namespace
}  // namespace mcl::test
