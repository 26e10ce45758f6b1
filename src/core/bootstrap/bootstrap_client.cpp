#include "core/bootstrap/bootstrap_client.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "base/stranger_policy.h"
#include "base/wire.h"
#include "core/bootstrap/init_cancel.h"

namespace mcl {

namespace {

using platform::Clock;

std::string describe(const std::vector<platform::SocketAddress>& roots) {
  std::string text;
  for (const auto& r : roots) text += (text.empty() ? "" : ", ") + r.toString();
  return text;
}

// What an attempt ended with, when it did not end in a proven root.
struct AttemptFailed {
  std::string why;
};

// Reads exactly one frame header of the given type and length, and its
// payload. Before the root has proven the secret nothing else is taken from
// it: no Failure text, no length beyond what the handshake needs.
std::vector<uint8_t> expectExact(int fd, FrameType type, uint32_t length,
                                 platform::Deadline deadline,
                                 bool* rejected = nullptr) {
  uint8_t header[8];
  platform::recvAll(fd, header, sizeof(header), deadline);
  WireReader r(header, sizeof(header), "handshake header");
  const uint32_t gotType = r.u32();
  const uint32_t gotLength = r.u32();
  if (rejected != nullptr &&
      gotType == static_cast<uint32_t>(FrameType::Rejected) && gotLength == 0) {
    *rejected = true;
    return {};
  }
  if (gotType != static_cast<uint32_t>(type) || gotLength != length)
    throw AttemptFailed{"it answered with something other than mcl's " +
                        std::string(frameTypeName(type)) + " (type " +
                        std::to_string(gotType) + ", " +
                        std::to_string(gotLength) + " bytes)"};
  std::vector<uint8_t> payload(length);
  platform::recvAll(fd, payload.data(), payload.size(), deadline);
  return payload;
}

}  // namespace

void BootstrapClient::handshake(const Secret& secret,
                                platform::Deadline attemptDeadline) {
  const Nonce rootNonce = [&] {
    std::vector<uint8_t> bytes = expectExact(socket_.fd(), FrameType::Challenge,
                                             sizeof(Nonce), attemptDeadline);
    Nonce n;
    std::copy(bytes.begin(), bytes.end(), n.begin());
    return n;
  }();
  challenged_ = true;
  AuthProof proof;
  proof.nonce = randomNonce();
  proof.mac = authMac(secret, "mcl-client", rootNonce, proof.nonce);
  sendFrame(socket_.fd(), FrameType::AuthProof, encode(proof), attemptDeadline);
  bool rejected = false;
  std::vector<uint8_t> ok = expectExact(
      socket_.fd(), FrameType::AuthOk, sizeof(Mac), attemptDeadline, &rejected);
  if (rejected)
    throw error(mclInvalidArgument,
                "rank %d: the rendezvous root at %s rejected this rank's "
                "proof: wrong secret (a unique id from another job, or "
                "MCL_SECRET not the same on every rank?)",
                rank_, rootText_.c_str());
  Mac rootMac;
  std::copy(ok.begin(), ok.end(), rootMac.begin());
  if (!macEqual(rootMac, authMac(secret, "mcl-server", proof.nonce, rootNonce)))
    throw error(mclRemoteError,
                "rank %d: the process at %s does not know this unique id's "
                "secret: it is not our rendezvous root",
                rank_, rootText_.c_str());
  const SessionKeys keys =
      rendezvousKeys(secret, rootNonce, proof.nonce, /*weAreTheRank=*/true);
  sealer_ = std::make_unique<Sealer>(keys.send);
  opener_ = std::make_unique<Opener>(keys.receive);
}

// Connects and proves the secret, again with a new connection while the
// root is not up yet, drops this one (busy with strangers) or does not
// answer within an attempt's time, until the deadline.
void BootstrapClient::join(const UniqueIdContents& id) {
  const std::vector<platform::SocketAddress> roots = id.allRoots();
  auto backoff = std::chrono::milliseconds(5);
  auto attempt = std::chrono::duration_cast<Clock::duration>(
      stranger_policy::kFirstAttempt);
  std::string lastError = "no attempt";
  bool everAnswered = false;  // some attempt got the root's challenge
  while (true) {
    checkInitCancelled("the rendezvous");
    const auto attemptDeadline = std::min(deadline_, Clock::now() + attempt);
    bool connected = false;
    try {
      socket_ = platform::connectAny(roots, attemptDeadline);
      connected = true;
      rootText_ = platform::peerAddress(socket_.fd()).toString();
      if (cancel_ != nullptr) cancel_->watch(socket_.fd());
      handshake(id.secret, attemptDeadline);
      return;
    } catch (const AttemptFailed& e) {
      throw error(mclRemoteError,
                  "rank %d: the process listening at %s is not an mcl "
                  "rendezvous root: %s (another program holds the port?)",
                  rank_, rootText_.c_str(), e.why.c_str());
    } catch (const std::system_error& e) {
      lastError = e.what();
    } catch (const platform::TimeoutError& e) {
      lastError = connected ? "the root did not finish the handshake in time"
                            : e.what();
      attempt = std::min<Clock::duration>(attempt * 2,
                                          stranger_policy::kLongestAttempt);
    } catch (const platform::ConnectionClosed&) {
      lastError = "the root closed the connection during the handshake";
    }
    everAnswered = everAnswered || connected;
    if (cancel_ != nullptr && socket_.valid()) cancel_->unwatch(socket_.fd());
    socket_.close();
    const auto now = Clock::now();
    if (now >= deadline_) {
      if (everAnswered && lastError.find("handshake") != std::string::npos)
        throw error(mclTimeout,
                    "rank %d: the process listening at %s accepted the "
                    "connection but never %s mcl's handshake: another "
                    "program holds that port (MCL_ROOT's, or the port in the "
                    "unique id), a proxy or firewall holds the connection%s",
                    rank_, describe(roots).c_str(),
                    challenged_ ? "finished" : "began",
                    challenged_ ? ", or the root is too busy" : "");
      throw error(mclTimeout,
                  "could not reach the rendezvous root at %s before the "
                  "timeout (last error: %s); is rank 0 (MCL_ROOT) or the "
                  "process that called mclGetUniqueId running?",
                  describe(roots).c_str(), lastError.c_str());
    }
    MCL_LOG(Trace, kLogBootstrap, "rank %d: rendezvous attempt failed: %s",
            rank_, lastError.c_str());
    std::this_thread::sleep_for(
        std::min<Clock::duration>(backoff, deadline_ - now));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(200));
  }
}

BootstrapClient::BootstrapClient(const UniqueIdContents& id, const Hello& hello,
                                 platform::Deadline deadline)
    : deadline_(deadline), rank_(hello.rank) {
  cancel_ = currentInitCancel();
  join(id);
  send(FrameType::Hello, encode(hello), "rendezvous");
  welcome_ = decodeWelcome(expect(FrameType::Welcome, "rendezvous").payload);
  if (welcome_.peers.size() != static_cast<size_t>(hello.nranks))
    throw error(mclRemoteError, "the root described %zu ranks, expected %d",
                welcome_.peers.size(), hello.nranks);
  MCL_LOG(Info, kLogBootstrap,
          "rank %d: joined the rendezvous at %s (%d ranks)", rank_,
          rootText_.c_str(), hello.nranks);
}

void BootstrapClient::send(FrameType type, const std::vector<uint8_t>& payload,
                           const char* during) {
  try {
    sendSealedFrame(socket_.fd(), *sealer_, type, payload, deadline_);
  } catch (const std::exception& e) {
    // The root may have said why before it closed: report that instead.
    std::string why = e.what();
    try {
      auto quick = platform::Clock::now() + std::chrono::milliseconds(100);
      Frame f = receive(std::min(quick, deadline_));
      if (f.type == FrameType::Failure) {
        Failure failure = decodeFailure(f.payload);
        if (failure.code > 0 && failure.code < mclNumResults)
          throw Error(static_cast<mclResult_t>(failure.code),
                      "rank " + std::to_string(rank_) +
                          ": init failed: " + failure.message);
      }
    } catch (const Error&) {
      throw;
    } catch (const std::exception&) {
    }
    throw error(mclRemoteError,
                "rank %d: lost the connection to the rendezvous root at %s "
                "during %s: %s",
                rank_, rootText_.c_str(), during, why.c_str());
  }
}

Frame BootstrapClient::receive(platform::Deadline deadline) {
  return openSealedFrame(*opener_, recvFrame(socket_.fd(), deadline),
                         "the rendezvous root at " + rootText_);
}

Frame BootstrapClient::expect(FrameType type, const char* during) {
  Frame f;
  try {
    f = receive(deadline_);
  } catch (const platform::TimeoutError&) {
    throw error(mclTimeout,
                "rank %d: timed out during %s with the rendezvous root at %s "
                "(are all ranks started, with the same nranks?)",
                rank_, during, rootText_.c_str());
  } catch (const platform::ConnectionClosed&) {
    // Right after the Hello, with no word why: what a root of bootstrap
    // protocol 1 does with a sealed Hello it cannot read.
    const bool afterHello = welcome_.peers.empty();
    throw error(mclRemoteError,
                "rank %d: the rendezvous root at %s closed the connection "
                "during %s%s",
                rank_, rootText_.c_str(), during,
                afterHello ? " without saying why, after this rank's Hello: "
                             "a root of an older mcl (bootstrap protocol 1) "
                             "does so, unable to read a sealed Hello; is the "
                             "same mcl installed on every host?"
                           : "");
  }
  if (f.type == FrameType::Failure) throwFailure(f);
  if (f.type != type)
    throw error(mclRemoteError, "rank %d: the root sent %s, expected %s", rank_,
                frameTypeName(f.type), frameTypeName(type));
  return f;
}

std::vector<std::vector<uint8_t>> BootstrapClient::allGather(
    const std::vector<uint8_t>& mine) {
  AllGatherMessage m;
  m.round = round_;
  m.parts.push_back(mine);
  send(FrameType::AllGather, encode(m), "init");
  AllGatherMessage result =
      decodeAllGather(expect(FrameType::AllGatherResult, "init").payload);
  if (result.round != round_ || result.parts.size() != welcome_.peers.size())
    throw error(mclRemoteError, "rank %d: all-gather round %u came back wrong",
                rank_, round_);
  ++round_;
  return std::move(result.parts);
}

void BootstrapClient::close() {
  if (!socket_.valid()) return;
  try {
    sendSealedFrame(socket_.fd(), *sealer_, FrameType::Bye, {}, deadline_);
  } catch (const std::exception&) {
  }
  if (cancel_ != nullptr) cancel_->unwatch(socket_.fd());
  socket_.close();
}

void BootstrapClient::throwIfFailed() {
  pollfd p{socket_.fd(), POLLIN, 0};
  if (!socket_.valid() || poll(&p, 1, 0) <= 0) return;
  // Between rounds the root sends only a Failure, or closes: expect()
  // throws with the reason either way (it never returns a Failure).
  expect(FrameType::Failure, "init");
}

void BootstrapClient::throwFailureArrivingWithin(
    std::chrono::milliseconds wait) {
  pollfd p{socket_.fd(), POLLIN, 0};
  if (!socket_.valid() || poll(&p, 1, static_cast<int>(wait.count())) <= 0)
    return;
  Frame f;
  try {
    f = receive(Clock::now() + wait);
  } catch (const Error&) {
    throw;  // altered on the way: that is news
  } catch (const std::exception&) {
    return;  // the root closed, or said nothing whole
  }
  if (f.type == FrameType::Failure) throwFailure(f);
}

void BootstrapClient::throwFailure(const Frame& f) const {
  const Failure failure = decodeFailure(f.payload);
  throw Error(
      failureResult(failure.code),
      "rank " + std::to_string(rank_) + ": init failed: " + failure.message);
}

void BootstrapClient::abandon(int code, const std::string& message) {
  if (!socket_.valid()) return;
  try {
    auto soon = std::min(deadline_, Clock::now() + std::chrono::seconds(1));
    sendSealedFrame(socket_.fd(), *sealer_, FrameType::Failure,
                    encode(Failure{code, message.substr(0, 4000)}), soon);
  } catch (const std::exception&) {
  }
  if (cancel_ != nullptr) cancel_->unwatch(socket_.fd());
  socket_.close();
}

BootstrapClient::~BootstrapClient() {
  if (cancel_ != nullptr && socket_.valid()) cancel_->unwatch(socket_.fd());
}

}  // namespace mcl
