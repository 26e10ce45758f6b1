// Ranks of two mcl releases in one job: bootstrap protocol 1 sent
// everything after the handshake in the clear, protocol 2 seals it. The
// handshake itself did not change, so the two meet past it; each side must
// then fail at once, naming the versions, not at the timeout nor with a
// tale of injected frames. The protocol-1 peer is played here byte for
// byte (its frames are the unsealed ones of bootstrap_protocol.h).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "base/auth.h"
#include "base/error.h"
#include "core/bootstrap/bootstrap_client.h"
#include "core/bootstrap/bootstrap_protocol.h"
#include "core/bootstrap/bootstrap_root.h"
#include "core/bootstrap/unique_id.h"
#include "platform/socket.h"

namespace mcl {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

platform::Deadline soon() { return Clock::now() + 5s; }

Hello helloOf(int rank, int nranks, uint32_t protocol) {
  Hello h;
  h.protocol = protocol;
  h.rank = rank;
  h.nranks = nranks;
  h.pid = static_cast<uint32_t>(getpid());
  h.timeoutMs = 10000;
  h.hostId = "mixed-versions-test";
  h.hostName = "localhost";
  return h;
}

// The handshake as both protocols make it, from the rank's side.
void proveAsRank(int fd, const Secret& secret) {
  const Frame challenge = recvFrame(fd, soon());
  ASSERT_EQ(challenge.type, FrameType::Challenge);
  Nonce rootNonce;
  std::copy(challenge.payload.begin(), challenge.payload.end(),
            rootNonce.begin());
  AuthProof proof;
  proof.nonce = randomNonce();
  proof.mac = authMac(secret, "mcl-client", rootNonce, proof.nonce);
  sendFrame(fd, FrameType::AuthProof, encode(proof), soon());
  ASSERT_EQ(recvFrame(fd, soon()).type, FrameType::AuthOk);
}

// A rank of this release, joining on a thread: what its init says.
class ThisRelease {
 public:
  ThisRelease(const UniqueIdContents& id, int rank, int nranks)
      : thread_([=, this] {
          try {
            BootstrapClient client(id,
                                   helloOf(rank, nranks, kBootstrapProtocol),
                                   Clock::now() + 10s);
            error_ = "joined";
          } catch (const Error& e) {
            code_ = e.code();
            error_ = e.what();
          }
        }) {}
  ~ThisRelease() {
    if (thread_.joinable()) thread_.join();
  }
  void join() { thread_.join(); }
  mclResult_t code() const { return code_; }
  const std::string& error() const { return error_; }

 private:
  mclResult_t code_ = mclSuccess;
  std::string error_;
  std::thread thread_;
};

TEST(MixedVersions, ARankOfProtocol1FailsTheJobNamingBothProtocols) {
  UniqueIdContents id;
  id.secret = randomSecret();
  const std::vector<platform::SocketAddress> roots = startRendezvousRoot(
      id.secret, {platform::SocketAddress::fromNumeric("127.0.0.1", 0)}, 10);
  ASSERT_FALSE(roots.empty());
  id.root = roots.front();

  const auto start = Clock::now();
  ThisRelease rank0(id, 0, 2);
  // Rank 0 first: a root that has failed is gone, and a rank that comes
  // after that waits for its timeout (no new rank is told why). Rank 0
  // says hello within milliseconds; 2 s leaves room for a busy machine.
  std::this_thread::sleep_for(2s);
  // The older rank 1: the same handshake, then its Hello in the clear.
  platform::Socket older = platform::connectTcp(id.root, soon());
  proveAsRank(older.fd(), id.secret);
  sendFrame(older.fd(), FrameType::Hello, encode(helloOf(1, 2, 1)), soon());

  // It is told why, in the clear frames it reads.
  const Frame answer = recvFrame(older.fd(), soon());
  ASSERT_EQ(answer.type, FrameType::Failure);
  const Failure failure = decodeFailure(answer.payload);
  EXPECT_EQ(failure.code, mclInvalidUsage);
  for (const char* says : {"rank 1", "bootstrap protocol 1",
                           "this root speaks 2", "mixed mcl versions"})
    EXPECT_NE(failure.message.find(says), std::string::npos)
        << "missing \"" << says << "\": " << failure.message;

  // And so is the rank of this release, at once.
  // (not after its 10-s timeout).
  rank0.join();
  EXPECT_LT(Clock::now() - start, 8s);
  printf("# rank of this release beside one of protocol 1: %s\n",
         rank0.error().c_str());
  EXPECT_EQ(rank0.code(), mclInvalidUsage) << rank0.error();
  EXPECT_NE(rank0.error().find("bootstrap protocol 1"), std::string::npos)
      << rank0.error();
}

// A root of protocol 1, played on a socket of this test: it takes the
// rank's proof, then does what it did with a frame type it did not know
// (a Sealed one): drop the connection without a word. Or, as such a root
// does when init fails for another reason meanwhile, send a Failure in the
// clear (its text unauthenticated: not shown).
class OlderRoot {
 public:
  enum class Then { Close, FailInTheClear };
  OlderRoot(const Secret& secret, Then then)
      : listener_(platform::listenTcp(
            platform::SocketAddress::fromNumeric("127.0.0.1", 0), 4)) {
    thread_ = std::thread([this, secret, then] {
      try {
        // The listening socket does not block: wait for the rank first.
        pollfd rank{listener_.fd(), POLLIN, 0};
        if (poll(&rank, 1, 5000) != 1) return;
        const int fd = accept(listener_.fd(), nullptr, nullptr);
        if (fd < 0) return;
        fcntl(fd, F_SETFL, 0);  // blocking, as the frame helpers expect
        platform::Socket s(fd);
        const Nonce mine = randomNonce();
        sendFrame(fd, FrameType::Challenge,
                  std::vector<uint8_t>(mine.begin(), mine.end()), soon());
        const AuthProof proof = decodeAuthProof(recvFrame(fd, soon()).payload);
        const Mac answer = authMac(secret, "mcl-server", proof.nonce, mine);
        sendFrame(fd, FrameType::AuthOk,
                  std::vector<uint8_t>(answer.begin(), answer.end()), soon());
        uint8_t header[8];
        platform::recvAll(fd, header, sizeof(header), soon());
        sawSealed_ = header[3] == static_cast<uint8_t>(FrameType::Sealed);
        if (then == Then::Close) return;  // with bytes unread: a reset
        // Reads the frame whole, fails, and closes only once the rank did,
        // so that nothing resets the connection under the Failure.
        std::vector<uint8_t> body(size_t(header[6]) << 8 | header[7]);
        platform::recvAll(fd, body.data(), body.size(), soon());
        sendFrame(fd, FrameType::Failure,
                  encode(Failure{mclRemoteError, "another rank failed"}),
                  soon());
        char sink[64];
        while (read(fd, sink, sizeof(sink)) > 0) {
        }
      } catch (const std::exception&) {
      }
    });
  }
  ~OlderRoot() {
    if (thread_.joinable()) thread_.join();
  }
  // Once it is done: whether the rank's Hello came sealed.
  bool sawSealed() {
    if (thread_.joinable()) thread_.join();
    return sawSealed_;
  }
  platform::SocketAddress address() const {
    return platform::localAddress(listener_.fd());
  }

 private:
  platform::Socket listener_;
  bool sawSealed_ = false;
  std::thread thread_;
};

TEST(MixedVersions, ARankMeetingARootOfProtocol1SaysItMayBeOlder) {
  for (const OlderRoot::Then then :
       {OlderRoot::Then::Close, OlderRoot::Then::FailInTheClear}) {
    UniqueIdContents id;
    id.secret = randomSecret();
    mclResult_t code = mclSuccess;
    std::string error;
    bool sawSealed = false;
    const auto start = Clock::now();
    {
      OlderRoot root(id.secret, then);
      id.root = root.address();
      try {
        BootstrapClient client(id, helloOf(0, 2, kBootstrapProtocol),
                               Clock::now() + 10s);
      } catch (const Error& e) {
        code = e.code();
        error = e.what();
      }
      sawSealed = root.sawSealed();
    }
    printf("# rank of this release, root of protocol 1: %s\n", error.c_str());
    EXPECT_LT(Clock::now() - start, 8s) << error;  // not its 10-s timeout
    EXPECT_EQ(code, mclRemoteError) << error;
    EXPECT_TRUE(sawSealed) << "this release's Hello went unsealed";
    if (then == OlderRoot::Then::FailInTheClear) {
      EXPECT_NE(error.find("sent a Failure frame in the clear"),
                std::string::npos)
          << error;
      EXPECT_EQ(error.find("another rank failed"), std::string::npos)
          << "an unauthenticated text reached the user: " << error;
    }
    for (const char* says : {"older", "bootstrap protocol 1", "same mcl"})
      EXPECT_NE(error.find(says), std::string::npos)
          << "missing \"" << says << "\": " << error;
  }
}

}  // namespace
}  // namespace mcl
