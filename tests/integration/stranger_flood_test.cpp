// 400 strangers at the rendezvous, and at the ranks' listeners (the side
// channel's and the TCP transport's): each holds a connection open and
// says nothing, and opens a new one as soon as mcl drops it. A 2- and a
// 4-rank job complete within 1 s of their time without them (the root and the
// listeners accept every connection, drop strangers after a short window, and
// never drop a rank in its handshake in their favour; ranks connect again when
// an attempt stalls). What is compared is two timings, so each comparison
// gets kTries: a busy machine may slow one flooded run by a second (the
// flood itself takes CPU from the ranks), but the fault this catches, a
// rank's connection lost behind strangers, costs the kernel's SYN retry in
// every run.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <mcl/mcl.h>
#include <netinet/in.h>

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
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
// The issue asks for 2 s. A rank's connection that a listener's full queue
// refuses in front of strangers waits for the kernel's SYN retry, a whole
// second: under 1 s, none was.
constexpr auto kMargin = 1s;
constexpr int kTries = 3;

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

// One try of a comparison: a job without strangers and one among them;
// valid is false when the flood never met what it was aimed at (the try
// proves nothing then, and another is made).
struct Try {
  double quiet = 0;
  double flooded = 0;
  bool valid = true;
  bool within() const {
    return valid &&
           flooded < quiet + std::chrono::duration<double>(kMargin).count();
  }
};

// Runs `once` up to kTries times, until one try is valid and within the
// margin; fails naming every try's figures when none was.
template <typename Once>
void expectWithinMarginOnSomeTry(const char* where, int nranks, Once once) {
  std::string tries;
  for (int i = 0; i < kTries; ++i) {
    const Try t = once();
    if (::testing::Test::HasFailure()) return;  // a job failed: said already
    if (t.within()) return;
    char line[160];
    std::snprintf(line, sizeof(line), "\n  try %d: %.2f s quiet, %.2f s %s",
                  i + 1, t.quiet, t.flooded,
                  t.valid ? "flooded" : "flooded, but the flood met nothing");
    tries += line;
  }
  ADD_FAILURE() << "strangers " << where << " delayed a " << nranks
                << "-rank init by " << std::chrono::seconds(kMargin).count()
                << " s or more (or never met it) in each of " << kTries
                << " tries:" << tries;
}

TEST_P(StrangerFloodTest, AtTheRendezvousDelaysInitByLessThanTwoSeconds) {
  const int nranks = GetParam();
  expectWithinMarginOnSomeTry("at the rendezvous", nranks, [&] {
    Try t;
    t.quiet = rendezvousJobSeconds(nranks, false);
    t.flooded = rendezvousJobSeconds(nranks, true);
    return t;
  });
}

// The child processes of this one (the ranks, and a flood) by pid.
std::vector<pid_t> childProcesses() {
  std::vector<pid_t> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (dirent* e = readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(atoi(e->d_name));
    if (pid <= 0) continue;
    std::ifstream stat(std::string("/proc/") + e->d_name + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...: comm may hold spaces, so after its ')'.
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream after(line.substr(close + 1));
    std::string state;
    pid_t parent = 0;
    after >> state >> parent;
    if (parent == getpid()) children.push_back(pid);
  }
  closedir(proc);
  return children;
}

// A rank's TCP listener is open only for the few milliseconds of init,
// too short for strangers to find it. This holds the listeners open: once
// some rank listens on a port of [first, last] (its side channel or its
// TCP transport), it stops one rank (a child of this process other than
// `spare`) for kPause, then lets it go on. The others wait for it in
// init's next exchange with their listeners open, and it meets them, and
// they it, among the strangers.
class ListenersHeldOpen {
 public:
  static constexpr auto kPause = 300ms;

  ListenersHeldOpen(int first, int last, pid_t spare)
      : thread_([=, this] { run(first, last, spare); }) {}
  ~ListenersHeldOpen() {
    stop_ = true;
    thread_.join();
  }
  bool paused() const { return paused_; }

 private:
  void run(int first, int last, pid_t spare) {
    const auto until = Clock::now() + 20s;
    while (!stop_ && Clock::now() < until) {
      std::set<int> ports;
      for (const sockaddr_in& a : listenersInRange(first, last))
        ports.insert(ntohs(a.sin_port));
      if (!ports.empty()) {
        for (pid_t child : childProcesses()) {
          if (child == spare || kill(child, SIGSTOP) != 0) continue;
          std::this_thread::sleep_for(kPause);
          kill(child, SIGCONT);
          paused_ = true;
          return;
        }
      }
      std::this_thread::sleep_for(200us);
    }
  }

  std::atomic<bool> stop_{false};
  std::atomic<bool> paused_{false};
  std::thread thread_;
};

// The TCP listeners are on ports of MCL_PORT_RANGE: the strangers look for
// them every millisecond and all go to the ones open at the time, while
// one rank is held up with every listener open (in both runs alike).
TEST_P(StrangerFloodTest, AtTheTcpListenersDelaysInitByLessThanTwoSeconds) {
  const int nranks = GetParam();
  const int first = 41000 + 64 * (nranks % 8) + (getpid() % 16) * 512;
  const int last = first + 47;
  const std::string range = std::to_string(first) + "-" + std::to_string(last);
  // A job's time, and whether the flood met a TCP listener (always true
  // for a job without one).
  auto job = [&](bool flooded, bool* met) {
    std::unique_ptr<StrangerFlood> flood;
    if (flooded) {
      flood = std::make_unique<StrangerFlood>(kStrangers);
      flood->aimAtListeners(first, last);
    }
    const auto start = Clock::now();
    bool paused = false;
    {
      ListenersHeldOpen hold(first, last, flood ? flood->pid() : 0);
      EXPECT_TRUE(runRanks(
          nranks,
          [&](RankContext& ctx) {
            setenv("MCL_TRANSPORT", "tcp", 1);
            setenv("MCL_PORT_RANGE", range.c_str(), 1);
            initReduceDestroy(ctx);
          },
          60s));
      paused = hold.paused();
    }
    const double seconds = secondsSince(start);
    printf("# %d ranks over tcp, one held up %lld ms, %s: %.2f s\n", nranks,
           static_cast<long long>(ListenersHeldOpen::kPause.count()),
           flood ? (std::to_string(kStrangers) +
                    " strangers at the listeners on " + range + " (" +
                    std::to_string(flood->opened()) + " connections, " +
                    std::to_string(flood->answered()) + " challenged)")
                       .c_str()
                 : "no strangers",
           seconds);
    // Else the strangers never met a listener and the try proves nothing:
    // no moment when every rank's listener was open, or no stranger
    // reached a TCP listener. How many a TCP listener challenges varies
    // (those at the side channel's listener are dropped unchallenged:
    // there the rank speaks first); 129-631 here, 35 under
    // AddressSanitizer.
    *met = paused && (!flood || flood->answered() > 0);
    return seconds;
  };
  expectWithinMarginOnSomeTry("at the TCP listeners", nranks, [&] {
    Try t;
    bool quietMet = false;
    bool floodedMet = false;
    t.quiet = job(false, &quietMet);
    t.flooded = job(true, &floodedMet);
    t.valid = quietMet && floodedMet;
    return t;
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, StrangerFloodTest, ::testing::Values(2, 4));

}  // namespace
}  // namespace mcl::test
#endif
