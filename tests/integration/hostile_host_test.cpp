// Hosts that get in the way: a rendezvous port another process holds, a
// foreign program listening where the root should be, every port of
// MCL_PORT_RANGE taken, and a rank with too few descriptors. Each ends in
// an error that names the port, range or limit and the likely cause, on
// every rank; the same job passes once the obstacle is gone. Linux only
// (it reads /proc/self/fd).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "build_paths.h"
#include "command_run.h"
#include "expect_error.h"
#include "multiprocess.h"

#if defined(__linux__)
namespace mcl::test {
namespace {

// Listening sockets on `count` consecutive ports, below Linux's ephemeral
// range (32768 on) so that no outgoing connection holds one: on every
// address (IPv6's wildcard, which takes IPv4's too), so that no listener
// of any interface can have them.
class HeldPorts {
 public:
  explicit HeldPorts(int count) {
    for (int tries = 0, base = 20000 + getpid() % 10000;
         fds_.empty() && tries < 100; ++tries, base += 97) {
      for (int i = 0; i < count; ++i) {
        const int fd = listenOnEveryAddress(base + i);
        if (fd < 0) {
          release();
          break;
        }
        fds_.push_back(fd);
      }
      if (!fds_.empty()) first_ = base;
    }
  }
  ~HeldPorts() { release(); }
  int first() const { return first_; }
  int last() const { return first_ + static_cast<int>(fds_.size()) - 1; }

 private:
  // IPv6's wildcard, which takes IPv4's too; IPv4's where the host has no
  // IPv6. -1 when the port is taken.
  static int listenOnEveryAddress(int port) {
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    if (fd >= 0) {
      const int no = 0;
      setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof(no));
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_port = htons(static_cast<uint16_t>(port));
      a.sin6_addr = in6addr_any;
      if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
          listen(fd, 16) == 0)
        return fd;
      const bool taken = errno == EADDRINUSE;
      close(fd);
      if (taken) return -1;
    }
    fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
        listen(fd, 16) == 0)
      return fd;
    if (fd >= 0) close(fd);
    return -1;
  }
  void release() {
    for (int fd : fds_) close(fd);
    fds_.clear();
  }
  std::vector<int> fds_;
  int first_ = 0;
};

const std::string kPerf = mcl::testing::perfPath();
const std::string kSmallRun = " allreduce -b 8 -e 64 -f 8 -n 2 -w 1 -c 1";
const std::string kSecret = " MCL_SECRET=00112233445566778899aabbccddeeff";

void expectMentions(const CommandRun& run,
                    std::initializer_list<std::string> words) {
  for (const std::string& w : words)
    EXPECT_NE(run.output.find(w), std::string::npos) << "no '" << w << "' in:\n"
                                                     << run.output;
}

// One rank of an MCL_ROOT job whose root port is `port`, run by mcl-perf.
CommandRun rankOfRootJob(const std::string& port, int rank, int nranks,
                         int timeoutSeconds) {
  return runShell("MCL_ROOT=127.0.0.1:" + port + kSecret +
                  " MCL_RANK=" + std::to_string(rank) +
                  " MCL_WORLD_SIZE=" + std::to_string(nranks) +
                  " MCL_TIMEOUT=" + std::to_string(timeoutSeconds) + " " +
                  kPerf + kSmallRun);
}

TEST(BusyPorts, RendezvousPortHeldNamesThePortAndWhoMayHoldIt) {
  HeldPorts held(1);
  ASSERT_GT(held.first(), 0) << "no free port to hold";
  const std::string port = std::to_string(held.first());
  const CommandRun run = rankOfRootJob(port, 0, 1, 10);
  EXPECT_NE(run.status, 0) << run.output;
  expectMentions(run, {"127.0.0.1:" + port, "Address already in use",
                       "ss -ltnp 'sport = :" + port + "'", "same MCL_ROOT",
                       "leftover process"});
  EXPECT_EQ(run.output.find("MCL_SOCKET_IFNAME"), std::string::npos)
      << run.output;
}

TEST(BusyPorts, AForeignListenerWhereTheRootShouldBeIsNamed) {
  HeldPorts held(1);  // listens, never speaks
  ASSERT_GT(held.first(), 0) << "no free port to hold";
  const std::string port = std::to_string(held.first());
  const CommandRun run = rankOfRootJob(port, 1, 2, 2);
  EXPECT_NE(run.status, 0) << run.output;
  expectMentions(run, {"127.0.0.1:" + port, "never began mcl's handshake",
                       "another program holds that port"});
}

TEST(BusyPorts, EveryPortOfTheRangeTakenIsNamedAndAFreeRangeIsUsed) {
  HeldPorts held(4);
  ASSERT_GT(held.first(), 0) << "no 4 free ports in a row to hold";
  const std::string busy =
      std::to_string(held.first()) + "-" + std::to_string(held.last());
  CommandRun run =
      runShell("MCL_PORT_RANGE=" + busy + " MCL_TRANSPORT=tcp MCL_TIMEOUT=10 " +
               kPerf + kSmallRun + " -np 2");
  EXPECT_NE(run.status, 0) << run.output;
  expectMentions(run, {"every port of MCL_PORT_RANGE=" + busy + " is taken",
                       "widen the range"});

  // Just above the held ports: every listener of the job takes one there.
  const int first = held.last() + 1;
  const std::string free =
      std::to_string(first) + "-" + std::to_string(first + 40);
  run = runShell("MCL_PORT_RANGE=" + free +
                 " MCL_TRANSPORT=tcp MCL_TIMEOUT=10 MCL_DEBUG=INFO " + kPerf +
                 kSmallRun + " -np 2");
  EXPECT_EQ(run.status, 0) << run.output;
  expectMentions(run, {"Out of bounds values : 0 OK",
                       "rendezvous root listening on 127.0.0.1:"});
  const size_t at = run.output.find("rendezvous root listening on 127.0.0.1:");
  if (at != std::string::npos) {
    const int port = std::stoi(run.output.substr(at + 39));
    EXPECT_GE(port, first);
    EXPECT_LE(port, first + 40);
  }

  run = runShell("MCL_PORT_RANGE=9-2 " + kPerf + kSmallRun + " -np 2");
  EXPECT_NE(run.status, 0);
  expectMentions(run, {"MCL_PORT_RANGE=9-2 is not a range of ports"});
}

int openDescriptors() {
  int count = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)e;
    ++count;
  }
  return count - 1;  // not the iterator's own
}

TEST(DescriptorLimit, TooFewFailsEveryRankNamingTheLimitThenEnoughPasses) {
  if (underSanitizers())
    GTEST_SKIP() << "UBSan checks memory through a pipe: with no "
                    "descriptors left it reports objects as invalid";
  // Rank 1 may open 3 more descriptors: it joins the rendezvous and runs
  // out while it opens its side channel. Every rank hears it.
  EXPECT_TRUE(runRanks(4, [](RankContext& ctx) {
    rlimit before{};
    getrlimit(RLIMIT_NOFILE, &before);
    if (ctx.rank() == 1) {
      rlimit few = before;
      few.rlim_cur = static_cast<rlim_t>(openDescriptors() + 3);
      if (setrlimit(RLIMIT_NOFILE, &few) != 0) ctx.fail("setrlimit");
    }
    mclConfig_t config = MCL_CONFIG_INITIALIZER;
    config.timeoutSeconds = 20;
    mclComm_t comm = nullptr;
    const mclResult_t r = mclCommInitRankConfig(&comm, ctx.nranks(), ctx.id(),
                                                ctx.rank(), &config);
    if (ctx.rank() == 1)
      expectError(ctx, r, mclSystemError, "init of the rank out of them",
                  {"Too many open files", "ulimit -n",
                   "descriptors per rank during init"});
    else
      expectError(ctx, r, mclSystemError, "init of the others",
                  {"rank 1: ", "Too many open files", "ulimit -n"});
    if (r == mclSuccess) mclCommDestroy(comm);
    // The harness (and a sanitizer's leak check) may need descriptors.
    setrlimit(RLIMIT_NOFILE, &before);
  }));
  EXPECT_TRUE(runRanks(4, [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, 20);
    if (comm == nullptr) return;
    expectAllReduceWorks(ctx, comm, "init with enough descriptors");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  }));
}

}  // namespace
}  // namespace mcl::test
#endif
