// Bad input outside the operations: version and error strings, unique id
// strings, configs, init arguments, stale communicator and stream handles,
// and group calls out of order. Each returns its documented code at once
// with a message naming the argument; a communicator, where there is one,
// still works afterwards.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <thread>
#include <utility>

#include "expect_error.h"
#include "multiprocess.h"

namespace mcl::test {
namespace {

constexpr auto kSetupBound = std::chrono::seconds(30);
constexpr int kSetupTimeout = 5;
const char* const kSecret = "00112233445566778899aabbccddeeff";

std::string idText(const std::string& rest) { return "mcl1:" + rest; }

// These touch no communicator and start no thread, so they run in the test
// process itself.
TEST(BadSetupInput, VersionAndErrorStrings) {
  EXPECT_EQ(mclGetVersion(nullptr), mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("version is NULL"),
            std::string::npos)
      << mclGetLastError(nullptr);
  int version = -1;
  EXPECT_EQ(mclGetVersion(&version), mclSuccess);
  EXPECT_EQ(version, MCL_VERSION_CODE);
  // A successful call leaves the last error as it was.
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("version is NULL"),
            std::string::npos);
  for (int r = -1; r <= mclNumResults + 5; ++r) {
    const char* text = mclGetErrorString(static_cast<mclResult_t>(r));
    ASSERT_NE(text, nullptr) << "result " << r;
    EXPECT_GT(strlen(text), 0u) << "result " << r;
  }
  EXPECT_STRNE(mclGetErrorString(mclTimeout), mclGetErrorString(mclSuccess));
}

TEST(BadSetupInput, LastErrorIsPerThread) {
  EXPECT_EQ(mclGetVersion(nullptr), mclInvalidArgument);
  std::string other = "unset";
  std::thread([&] { other = mclGetLastError(nullptr); }).join();
  EXPECT_EQ(other, "") << "a fresh thread sees another thread's error";
}

TEST(BadSetupInput, UniqueIdStringRoundTrip) {
  mclUniqueId id;
  std::string text = idText(std::string("127.0.0.1:4242:") + kSecret);
  ASSERT_EQ(mclUniqueIdFromString(text.c_str(), &id), mclSuccess)
      << mclGetLastError(nullptr);
  char buf[MCL_UNIQUE_ID_STRING_BYTES];
  ASSERT_EQ(mclUniqueIdToString(&id, buf, sizeof(buf)), mclSuccess)
      << mclGetLastError(nullptr);
  EXPECT_EQ(std::string(buf), text);
  // Upper-case hex and IPv6 are accepted too.
  std::string v6 = idText("[::1]:4242:00112233445566778899AABBCCDDEEFF");
  ASSERT_EQ(mclUniqueIdFromString(v6.c_str(), &id), mclSuccess)
      << mclGetLastError(nullptr);
  ASSERT_EQ(mclUniqueIdToString(&id, buf, sizeof(buf)), mclSuccess);
  EXPECT_EQ(std::string(buf), idText(std::string("[::1]:4242:") + kSecret));
}

TEST(BadSetupInput, UniqueIdToStringBufferTooSmall) {
  mclUniqueId id;
  std::string text = idText(std::string("127.0.0.1:4242:") + kSecret);
  ASSERT_EQ(mclUniqueIdFromString(text.c_str(), &id), mclSuccess);
  char buf[MCL_UNIQUE_ID_STRING_BYTES + 8];
  for (size_t small : {size_t{0}, size_t{1}, size_t{10}, text.size()}) {
    memset(buf, 'Z', sizeof(buf));
    EXPECT_EQ(mclUniqueIdToString(&id, buf, small), mclInvalidArgument)
        << "bufSize " << small;
    std::string message = mclGetLastError(nullptr);
    EXPECT_NE(message.find("bufSize " + std::to_string(small)),
              std::string::npos)
        << message;
    for (size_t i = 0; i < sizeof(buf); ++i)
      ASSERT_EQ(buf[i], 'Z') << "byte " << i << " written, bufSize " << small;
  }
  EXPECT_EQ(mclUniqueIdToString(&id, buf, text.size() + 1), mclSuccess);
  EXPECT_EQ(std::string(buf), text);
  EXPECT_EQ(mclUniqueIdToString(nullptr, buf, sizeof(buf)), mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("uniqueId is NULL"),
            std::string::npos);
  EXPECT_EQ(mclUniqueIdToString(&id, nullptr, sizeof(buf)), mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("buf is NULL"),
            std::string::npos);
  mclUniqueId zeros;
  memset(&zeros, 0, sizeof(zeros));
  EXPECT_EQ(mclUniqueIdToString(&zeros, buf, sizeof(buf)), mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("unique id"),
            std::string::npos);
}

TEST(BadSetupInput, UniqueIdFromStringMalformed) {
  const std::string s = kSecret;
  const std::pair<std::string, const char*> cases[] = {
      {"", "prefix"},
      {"127.0.0.1:4242:" + s, "prefix"},
      {"mcl2:127.0.0.1:4242:" + s, "prefix"},
      {idText("127.0.0.1:" + s), "port"},
      {idText("127.0.0.1::" + s), "port"},
      {idText("127.0.0.1:http:" + s), "port"},
      {idText("127.0.0.1:-1:" + s), "port"},
      {idText("127.0.0.1:0:" + s), "port"},
      {idText("127.0.0.1:65536:" + s), "port"},
      {idText("127.0.0.1:999999:" + s), "port"},
      {idText("localhost:4242:" + s), "address"},
      {idText("127.0.0.1:4242:" + s.substr(1)), "32 hex"},
      {idText("127.0.0.1:4242:" + s + "0"), "32 hex"},
      {idText("127.0.0.1:4242:" + s.substr(0, 31) + "g"), "hex"},
      {idText("127.0.0.1:4242:" + s.substr(0, 31) + " "), "hex"},
      {idText("127.0.0.1:4242"), "hex"},
      {idText(std::string(600, '1') + ":4242:" + s), "longer"},
      {idText("127.0.0.1:4242:" + s + std::string(600, 'a')), "longer"},
  };
  for (const auto& [text, mention] : cases) {
    mclUniqueId id;
    memset(&id, 0x5a, sizeof(id));
    EXPECT_EQ(mclUniqueIdFromString(text.c_str(), &id), mclInvalidArgument)
        << "'" << text << "'";
    std::string message = mclGetLastError(nullptr);
    EXPECT_NE(message.find(mention), std::string::npos)
        << "'" << text << "' gave: " << message;
  }
  mclUniqueId id;
  EXPECT_EQ(mclUniqueIdFromString(nullptr, &id), mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("str is NULL"),
            std::string::npos);
  std::string good = idText("127.0.0.1:4242:" + s);
  EXPECT_EQ(mclUniqueIdFromString(good.c_str(), nullptr), mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("uniqueId is NULL"),
            std::string::npos);
}

TEST(BadSetupInput, BadConfigIsRejectedBeforeJoining) {
  auto body = [](RankContext& ctx) {
    auto tryInit = [&](mclConfig_t config, const char* what,
                       std::initializer_list<const char*> mentions) {
      mclComm_t comm = nullptr;
      expectError(ctx, mclCommInitRankConfig(&comm, 1, ctx.id(), 0, &config),
                  mclInvalidArgument, what, mentions);
      if (comm != nullptr) ctx.fail("%s: comm was set", what);
    };
    mclConfig_t c = MCL_CONFIG_INITIALIZER;
    c.magic = 0x12345678;
    tryInit(c, "wrong magic", {"magic", "12345678"});
    c = MCL_CONFIG_INITIALIZER;
    c.size = 8;
    tryInit(c, "config->size 8", {"size 8"});
    for (int t : {0, -1, -100}) {
      c = MCL_CONFIG_INITIALIZER;
      c.timeoutSeconds = t;
      std::string name = "timeoutSeconds " + std::to_string(t);
      tryInit(c, name.c_str(), {name.c_str()});
    }
    c = MCL_CONFIG_INITIALIZER;
    c.transport = "bogus";
    tryInit(c, "transport bogus", {"transport 'bogus'", "unknown"});
    c.transport = "";
    tryInit(c, "transport ''", {"transport ''"});
    // None of that reached the root: a good config still joins.
    c = MCL_CONFIG_INITIALIZER;
    c.timeoutSeconds = kSetupTimeout;
    c.transport = "shm";
    c.commName = "good";
    mclComm_t comm = nullptr;
    if (!ctx.ok(mclCommInitRankConfig(&comm, 1, ctx.id(), 0, &c),
                "init with a good config"))
      return;
    expectAllReduceWorks(ctx, comm, "bad configs");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(1, body, kSetupBound));
}

TEST(BadSetupInput, InitRankOrSizeOutOfRange) {
  auto body = [](RankContext& ctx) {
    auto tryInit = [&](int nranks, int rank, const char* mention) {
      mclComm_t comm = reinterpret_cast<mclComm_t>(&ctx);  // not NULL
      std::string what = "mclCommInitRank(nranks " + std::to_string(nranks) +
                         ", rank " + std::to_string(rank) + ")";
      expectError(ctx, mclCommInitRank(&comm, nranks, ctx.id(), rank),
                  mclInvalidArgument, what.c_str(), {mention});
      if (comm != nullptr)
        ctx.fail("%s: comm not set to NULL on failure", what.c_str());
    };
    tryInit(1, 1, "rank 1 is out of range");
    tryInit(1, -1, "rank -1 is out of range");
    tryInit(2, 7, "rank 7 is out of range");
    tryInit(0, 0, "nranks 0");
    tryInit(-3, 0, "nranks -3");
    mclUniqueId zeros;
    memset(&zeros, 0, sizeof(zeros));
    mclComm_t comm = nullptr;
    expectError(ctx, mclCommInitRank(&comm, 1, zeros, 0), mclInvalidArgument,
                "all-zero unique id", {"not a unique id"});
    comm = initComm(ctx, kSetupTimeout);
    if (comm == nullptr) return;
    expectAllReduceWorks(ctx, comm, "bad init arguments");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(1, body, kSetupBound));
}

TEST(BadSetupInput, DestroyedCommunicatorHandle) {
  mclUniqueId second;
  ASSERT_EQ(mclGetUniqueId(&second), mclSuccess);
  auto body = [&](RankContext& ctx) {
    mclComm_t stale = initComm(ctx, kSetupTimeout);
    if (stale == nullptr) return;
    mclConfig_t config = MCL_CONFIG_INITIALIZER;
    config.timeoutSeconds = kSetupTimeout;
    mclComm_t live = nullptr;
    if (!ctx.ok(mclCommInitRankConfig(&live, ctx.nranks(), second, ctx.rank(),
                                      &config),
                "second init"))
      return;
    ctx.ok(mclCommDestroy(stale), "mclCommDestroy");
    const char* gone = "not a live communicator";
    float x = 1, y = 0;
    int n = 0;
    mclResult_t async = mclSuccess;
    expectRejected(ctx, live,
                   mclAllReduce(&x, &y, 1, mclFloat, mclSum, stale, nullptr),
                   "mclAllReduce on a destroyed comm", {"mclAllReduce", gone});
    expectRejected(ctx, live, mclBarrier(stale, nullptr),
                   "mclBarrier on a destroyed comm", {gone});
    expectRejected(ctx, live, mclCommCount(stale, &n),
                   "mclCommCount on a destroyed comm", {"mclCommCount", gone});
    expectRejected(ctx, live, mclCommUserRank(stale, &n),
                   "mclCommUserRank on a destroyed comm", {gone});
    expectRejected(ctx, live, mclCommGetAsyncError(stale, &async),
                   "mclCommGetAsyncError on a destroyed comm", {gone});
    expectRejected(ctx, live, mclCommFinalize(stale),
                   "mclCommFinalize on a destroyed comm", {gone});
    expectRejected(ctx, live, mclCommDestroy(stale), "mclCommDestroy twice",
                   {"mclCommDestroy", gone});
    expectRejected(ctx, live, mclCommAbort(stale), "mclCommAbort after destroy",
                   {gone});
    ctx.ok(mclCommDestroy(live), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(2, body, kSetupBound));
}

TEST(BadSetupInput, GroupEndWithoutGroupStart) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kSetupTimeout);
    if (comm == nullptr) return;
    expectError(ctx, mclGroupEnd(), mclInvalidUsage, "lone mclGroupEnd",
                {"mclGroupEnd", "without mclGroupStart"});
    // Balanced groups, empty or not, still work; one End too many fails.
    ctx.ok(mclGroupStart(), "mclGroupStart");
    ctx.ok(mclGroupEnd(), "empty group");
    int32_t in = 4, out = 0;
    ctx.ok(mclGroupStart(), "mclGroupStart");
    ctx.ok(mclAllReduce(&in, &out, 1, mclInt32, mclSum, comm, nullptr),
           "all-reduce in a group");
    ctx.ok(mclGroupEnd(), "mclGroupEnd");
    if (out != 4) ctx.fail("grouped all-reduce gave %d, expected 4", out);
    expectError(ctx, mclGroupEnd(), mclInvalidUsage, "extra mclGroupEnd",
                {"without mclGroupStart"});
    expectAllReduceWorks(ctx, comm, "an unmatched mclGroupEnd");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(1, body, kSetupBound));
}

TEST(BadSetupInput, StaleStreamHandle) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kSetupTimeout);
    if (comm == nullptr) return;
    mclStream_t stream = nullptr;
    if (!ctx.ok(mclStreamCreate(&stream), "mclStreamCreate")) return;
    ctx.ok(mclStreamDestroy(stream), "mclStreamDestroy");
    const char* gone = "not a live stream";
    expectRejected(ctx, comm, mclStreamDestroy(stream),
                   "mclStreamDestroy twice", {"mclStreamDestroy", gone});
    expectRejected(ctx, comm, mclStreamSynchronize(stream),
                   "mclStreamSynchronize on a destroyed stream", {gone});
    expectRejected(ctx, comm, mclStreamQuery(stream),
                   "mclStreamQuery on a destroyed stream", {gone});
    int32_t x = 3, y = 0;
    expectRejected(ctx, comm,
                   mclAllReduce(&x, &y, 1, mclInt32, mclSum, comm, stream),
                   "mclAllReduce on a destroyed stream", {gone});
    // The NULL stream is always complete.
    ctx.ok(mclStreamSynchronize(nullptr), "mclStreamSynchronize(NULL)");
    ctx.ok(mclStreamQuery(nullptr), "mclStreamQuery(NULL)");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(1, body, kSetupBound));
}

}  // namespace
}  // namespace mcl::test
