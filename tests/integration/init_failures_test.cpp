// Init that cannot succeed: ranks that disagree on nranks or claim the same
// rank, a process holding an id with the wrong secret, a root that is gone,
// and a rank that never comes. Each rank gets a precise error, quickly where
// the root can tell at once, and within the timeout otherwise; the root
// keeps serving the legitimate ranks after a stranger knocks.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "baton.h"
#include "expect_error.h"
#include "multiprocess.h"

namespace mcl::test {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kBound = std::chrono::seconds(30);

// Init with an explicit nranks and rank (the harness' may not apply).
mclResult_t initAs(mclComm_t* comm, int nranks, const mclUniqueId& id, int rank,
                   int timeoutSeconds) {
  mclConfig_t config = MCL_CONFIG_INITIALIZER;
  config.timeoutSeconds = timeoutSeconds;
  return mclCommInitRankConfig(comm, nranks, id, rank, &config);
}

// A unique id whose root gives up after `seconds` (the root reads
// MCL_TIMEOUT when mclGetUniqueId starts it).
mclUniqueId idWithRootTimeout(int seconds) {
  const char* old = getenv("MCL_TIMEOUT");
  std::string saved = old ? old : "";
  setenv("MCL_TIMEOUT", std::to_string(seconds).c_str(), 1);
  mclUniqueId id;
  mclResult_t r = mclGetUniqueId(&id);
  if (old)
    setenv("MCL_TIMEOUT", saved.c_str(), 1);
  else
    unsetenv("MCL_TIMEOUT");
  EXPECT_EQ(r, mclSuccess) << mclGetLastError(nullptr);
  return id;
}

// The rank's id with the last hex digit of its secret changed.
mclUniqueId withWrongSecret(RankContext& ctx) {
  char text[MCL_UNIQUE_ID_STRING_BYTES];
  mclUniqueId bad = ctx.id();
  if (!ctx.ok(mclUniqueIdToString(&bad, text, sizeof(text)), "to string"))
    return bad;
  size_t last = strlen(text) - 1;
  text[last] = text[last] == '0' ? '1' : '0';
  ctx.ok(mclUniqueIdFromString(text, &bad), "from string");
  if (memcmp(&bad, &ctx.id(), sizeof(bad)) == 0)
    ctx.fail("changing the secret left the id unchanged");
  return bad;
}

// A loopback port nobody listens on: bound, then closed, never listened.
int deadPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

TEST(InitFailure, RanksDisagreeOnNranks) {
  auto body = [](RankContext& ctx) {
    auto start = Clock::now();
    mclComm_t comm = nullptr;
    int claimed = ctx.rank() == 0 ? 2 : 3;
    expectError(ctx, initAs(&comm, claimed, ctx.id(), ctx.rank(), 10),
                mclInvalidUsage, "init with disagreeing nranks",
                {"disagree on nranks", "says 2", "says 3"});
    if (comm != nullptr) ctx.fail("comm was set");
    // The root can tell as soon as both have said hello.
    if (secondsSince(start) > 7)
      ctx.fail("the disagreement took %.1f s to report (timeout 10 s)",
               secondsSince(start));
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

TEST(InitFailure, TwoProcessesClaimTheSameRank) {
  auto body = [](RankContext& ctx) {
    auto start = Clock::now();
    mclComm_t comm = nullptr;
    expectError(ctx, initAs(&comm, 3, ctx.id(), 1, 10), mclInvalidUsage,
                "two processes as rank 1", {"two processes claim rank 1"});
    if (secondsSince(start) > 7)
      ctx.fail("the duplicate took %.1f s to report (timeout 10 s)",
               secondsSince(start));
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

// Process 2 holds the id with a wrong secret and knocks first, as rank 0;
// processes 0 and 1 then build a 2-rank communicator undisturbed.
TEST(InitFailure, WrongSecretIsRejectedAndRootKeepsServing) {
  Baton baton;
  auto body = [&](RankContext& ctx) {
    mclComm_t comm = nullptr;
    if (ctx.rank() == 2) {
      auto start = Clock::now();
      expectError(ctx, initAs(&comm, 2, withWrongSecret(ctx), 0, 10),
                  mclInvalidArgument, "init with a wrong secret",
                  {"wrong secret"});
      if (secondsSince(start) > 7)
        ctx.fail("the wrong secret took %.1f s to report", secondsSince(start));
      baton.pass("stranger rejected");
      return;
    }
    if (!baton.await("stranger rejected"))
      ctx.fail("the stranger was not rejected within 60 s");
    if (!ctx.ok(initAs(&comm, 2, ctx.id(), ctx.rank(), 10), "legitimate init"))
      return;
    expectAllReduceWorks(ctx, comm, "a stranger's attempt");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(3, body, kBound));
}

// The rejected process may come back with the right id and join.
TEST(InitFailure, RankRejectedForWrongSecretCanRetry) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = nullptr;
    if (ctx.rank() == 1)
      expectError(ctx, initAs(&comm, 2, withWrongSecret(ctx), 1, 10),
                  mclInvalidArgument, "init with a wrong secret",
                  {"rank 1", "wrong secret"});
    if (!ctx.ok(initAs(&comm, 2, ctx.id(), ctx.rank(), 10), "init")) return;
    expectAllReduceWorks(ctx, comm, "a retry after a wrong secret");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

// Rank 1 joins, then its process exits while it waits for rank 2: the root
// tells rank 0 at once which rank is gone, without waiting for the timeout.
TEST(InitFailure, RankThatExitsDuringInitIsNamed) {
  auto body = [](RankContext& ctx) {
    if (ctx.rank() == 2) return;  // never comes
    mclComm_t comm = nullptr;
    if (ctx.rank() == 1) {
      // Time enough to say hello to the root, even on a busy machine.
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1000));
        _exit(0);
      }).detach();
      initAs(&comm, 3, ctx.id(), 1, 10);
      ctx.fail("init returned although rank 2 never came");
      return;
    }
    auto start = Clock::now();
    expectError(ctx, initAs(&comm, 3, ctx.id(), 0, 10), mclRemoteError,
                "init while rank 1 exits", {"rank 1", "closed the connection"});
    if (secondsSince(start) > 7)
      ctx.fail("rank 1's exit took %.1f s to report (timeout 10 s)",
               secondsSince(start));
  };
  EXPECT_TRUE(runRanks(3, body, kBound));
}

// Nobody listens on the id's port: mclTimeout after the timeout, naming the
// address. Rank 0 takes its timeout from the config, rank 1 from
// MCL_TIMEOUT.
TEST(InitFailure, RootIsGone) {
  int port = deadPort();
  ASSERT_GT(port, 0);
  std::string address = "127.0.0.1:" + std::to_string(port);
  std::string text = "mcl1:" + address + ":00112233445566778899aabbccddeeff";
  mclUniqueId id;
  ASSERT_EQ(mclUniqueIdFromString(text.c_str(), &id), mclSuccess);
  auto body = [&](RankContext& ctx) {
    mclComm_t comm = nullptr;
    auto start = Clock::now();
    mclResult_t r;
    if (ctx.rank() == 0) {
      r = initAs(&comm, 2, id, 0, 2);
    } else {
      setenv("MCL_TIMEOUT", "2", 1);
      r = mclCommInitRank(&comm, 2, id, 1);
    }
    expectError(ctx, r, mclTimeout, "init with no root",
                {address.c_str(), "rendezvous root"});
    double took = secondsSince(start);
    if (took < 1 || took > 6)
      ctx.fail("gave up after %.1f s, timeout 2 s", took);
  };
  EXPECT_TRUE(runRanksWithId(2, id, body, kBound));
}

// Rank 2 never calls init: ranks 0 and 1 get mclTimeout within the timeout,
// naming the missing rank. Root and ranks use the same timeout, as they do
// when everyone reads MCL_TIMEOUT.
TEST(InitFailure, MissingRankTimesOutNamingIt) {
  constexpr int kTimeout = 3;
  mclUniqueId id = idWithRootTimeout(kTimeout);
  auto body = [&](RankContext& ctx) {
    if (ctx.rank() == 2) return;
    mclComm_t comm = nullptr;
    auto start = Clock::now();
    expectError(ctx, initAs(&comm, 3, id, ctx.rank(), kTimeout), mclTimeout,
                "init with rank 2 missing", {"missing ranks 2"});
    double took = secondsSince(start);
    if (took > kTimeout + 3)
      ctx.fail("gave up after %.1f s, timeout %d s", took, kTimeout);
  };
  EXPECT_TRUE(runRanksWithId(3, id, body, kBound));
}

// The same with a root that gives up before the ranks do: its report, naming
// the missing rank, reaches them.
TEST(InitFailure, MissingRankNamedWhenRootGivesUpFirst) {
  mclUniqueId id = idWithRootTimeout(2);
  auto body = [&](RankContext& ctx) {
    if (ctx.rank() == 2) return;
    mclComm_t comm = nullptr;
    auto start = Clock::now();
    expectError(ctx, initAs(&comm, 3, id, ctx.rank(), 10), mclTimeout,
                "init with rank 2 missing", {"missing ranks 2", "2 of 3"});
    double took = secondsSince(start);
    if (took > 6) ctx.fail("gave up after %.1f s, root timeout 2 s", took);
  };
  EXPECT_TRUE(runRanksWithId(3, id, body, kBound));
}

}  // namespace
}  // namespace mcl::test
