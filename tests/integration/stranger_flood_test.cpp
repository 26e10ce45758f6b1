// 400 strangers at the rendezvous, and at the ranks' TCP listeners: each
// holds a connection open and says nothing, and opens a new one as soon as
// mcl drops it. A 2- and a 4-rank job complete within 2 s of their time
// without them (the root and the listeners accept every connection, drop
// strangers after a short window, and never drop a rank in its handshake
// in their favour; ranks connect again when an attempt stalls).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <mcl/mcl.h>
#include <netinet/in.h>
#include <stdlib.h>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "expect_error.h"
#include "listening_sockets.h"
#include "multiprocess.h"
#include "stranger_flood.h"

#if defined(__linux__)
namespace mcl::test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr size_t kStrangers = 400;
constexpr auto kMargin = 2s;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void initReduceDestroy(RankContext& ctx) {
  mclComm_t comm = initComm(ctx, 30);
  if (comm == nullptr) return;
  expectAllReduceWorks(ctx, comm, "init among strangers");
  ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
}

std::vector<sockaddr_in> ipv4(const std::vector<ListeningSocket>& sockets) {
  std::vector<sockaddr_in> out;
  for (const ListeningSocket& s : sockets) {
    sockaddr_in a{};
    if (inet_pton(AF_INET, s.host.c_str(), &a.sin_addr) != 1) continue;
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(s.port));
    out.push_back(a);
  }
  return out;
}

// Waits (up to 5 s) until the flood holds about as many connections as it
// has strangers: the job then starts into a full flood.
void waitUntilFlooding(const StrangerFlood& flood) {
  const auto until = Clock::now() + 5s;
  while (flood.opened() < kStrangers && Clock::now() < until)
    std::this_thread::sleep_for(5ms);
}

// The time of an nranks job whose rendezvous root (in this process) has
// kStrangers strangers on it, or none.
double rendezvousJobSeconds(int nranks, bool flooded) {
  std::unique_ptr<StrangerFlood> flood;
  if (flooded) flood = std::make_unique<StrangerFlood>(kStrangers);
  mclUniqueId id;
  EXPECT_EQ(mclGetUniqueId(&id), mclSuccess);
  if (flood) {
    const std::vector<sockaddr_in> root = ipv4(listeningSockets());
    EXPECT_FALSE(root.empty());
    flood->aim(root);
    waitUntilFlooding(*flood);
  }
  const auto start = Clock::now();
  EXPECT_TRUE(runRanksWithId(nranks, id, initReduceDestroy, 60s));
  const double seconds = secondsSince(start);
  if (flood)
    printf(
        "# %d ranks among %zu strangers (%zu connections opened, %zu "
        "challenged): %.2f s\n",
        nranks, kStrangers, flood->opened(), flood->answered(), seconds);
  else
    printf("# %d ranks, no strangers: %.2f s\n", nranks, seconds);
  return seconds;
}

class StrangerFloodTest : public ::testing::TestWithParam<int> {};

TEST_P(StrangerFloodTest, AtTheRendezvousDelaysInitByLessThanTwoSeconds) {
  const int nranks = GetParam();
  const double quiet = rendezvousJobSeconds(nranks, false);
  const double flooded = rendezvousJobSeconds(nranks, true);
  EXPECT_LT(flooded, quiet + std::chrono::duration<double>(kMargin).count())
      << "strangers at the rendezvous delayed a " << nranks << "-rank init";
}

// The TCP listeners are on ports of MCL_PORT_RANGE: the strangers knock on
// every port of it, on every address of this host.
TEST_P(StrangerFloodTest, AtTheTcpListenersDelaysInitByLessThanTwoSeconds) {
  const int nranks = GetParam();
  const int first = 41000 + 64 * (nranks % 8) + (getpid() % 16) * 512;
  const int last = first + 47;
  const std::string range = std::to_string(first) + "-" + std::to_string(last);
  auto job = [&](bool flooded) {
    std::unique_ptr<StrangerFlood> flood;
    if (flooded) {
      flood = std::make_unique<StrangerFlood>(kStrangers);
      flood->aim(localTargets(first, last));
      std::this_thread::sleep_for(200ms);  // knocking before init begins
    }
    const auto start = Clock::now();
    EXPECT_TRUE(runRanks(
        nranks,
        [&](RankContext& ctx) {
          setenv("MCL_TRANSPORT", "tcp", 1);
          setenv("MCL_PORT_RANGE", range.c_str(), 1);
          initReduceDestroy(ctx);
        },
        60s));
    const double seconds = secondsSince(start);
    printf("# %d ranks over tcp, %s: %.2f s\n", nranks,
           flood
               ? (std::to_string(kStrangers) + " strangers on ports " + range +
                  " (" + std::to_string(flood->opened()) + " connections, " +
                  std::to_string(flood->answered()) + " challenged)")
                     .c_str()
               : "no strangers",
           seconds);
    return seconds;
  };
  const double quiet = job(false);
  const double flooded = job(true);
  EXPECT_LT(flooded, quiet + std::chrono::duration<double>(kMargin).count())
      << "strangers at the TCP listeners delayed a " << nranks << "-rank init";
}

INSTANTIATE_TEST_SUITE_P(Ranks, StrangerFloodTest, ::testing::Values(2, 4));

}  // namespace
}  // namespace mcl::test
#endif
