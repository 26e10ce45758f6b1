#include "core/bootstrap_client.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "core/init_cancel.h"

namespace mcl {

namespace {

using platform::Clock;

std::string describe(const std::vector<platform::SocketAddress>& roots) {
  std::string text;
  for (const auto& r : roots) text += (text.empty() ? "" : ", ") + r.toString();
  return text;
}

// Connect, retrying with backoff while the root refuses (not started yet).
platform::Socket connectWithRetry(
    const std::vector<platform::SocketAddress>& roots,
    platform::Deadline deadline) {
  auto backoff = std::chrono::milliseconds(5);
  std::string lastError = "no attempt";
  while (true) {
    checkInitCancelled("the rendezvous");
    try {
      return platform::connectAny(roots, deadline);
    } catch (const std::system_error& e) {
      lastError = e.what();
    } catch (const platform::TimeoutError& e) {
      lastError = e.what();
    }
    auto now = Clock::now();
    if (now >= deadline)
      throw error(mclTimeout,
                  "could not reach the rendezvous root at %s before the "
                  "timeout (last error: %s); is rank 0 (MCL_ROOT) or the "
                  "process that called mclGetUniqueId running?",
                  describe(roots).c_str(), lastError.c_str());
    std::this_thread::sleep_for(
        std::min<Clock::duration>(backoff, deadline - now));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
  }
}

}  // namespace

BootstrapClient::BootstrapClient(const UniqueIdContents& id, const Hello& hello,
                                 platform::Deadline deadline)
    : deadline_(deadline), rank_(hello.rank) {
  socket_ = connectWithRetry(id.allRoots(), deadline);
  rootText_ = platform::peerAddress(socket_.fd()).toString();
  cancel_ = currentInitCancel();
  if (cancel_ != nullptr) cancel_->watch(socket_.fd());

  Frame challenge;
  try {
    challenge = expect(FrameType::Challenge, "authentication");
  } catch (const Error& e) {
    if (e.code() != mclTimeout) throw;
    // An mcl root challenges at once: this listener is something else.
    throw error(mclTimeout,
                "rank %d: the process listening at %s accepted the "
                "connection but never began mcl's handshake: another "
                "program holds that port (MCL_ROOT's, or the port in the "
                "unique id), or a proxy or firewall holds the connection",
                rank_, rootText_.c_str());
  }
  Nonce rootNonce;
  if (challenge.payload.size() != rootNonce.size())
    throw error(mclRemoteError, "malformed challenge from the root at %s",
                rootText_.c_str());
  std::copy(challenge.payload.begin(), challenge.payload.end(),
            rootNonce.begin());
  AuthProof proof;
  proof.nonce = randomNonce();
  proof.mac = authMac(id.secret, "mcl-client", rootNonce, proof.nonce);
  send(FrameType::AuthProof, encode(proof), "authentication");

  Frame ok = expect(FrameType::AuthOk, "authentication");
  Mac rootMac;
  if (ok.payload.size() != rootMac.size())
    throw error(mclRemoteError, "malformed AuthOk from %s", rootText_.c_str());
  std::copy(ok.payload.begin(), ok.payload.end(), rootMac.begin());
  if (!macEqual(rootMac,
                authMac(id.secret, "mcl-server", proof.nonce, rootNonce)))
    throw error(mclRemoteError,
                "the process at %s does not know this unique id's secret: it "
                "is not our rendezvous root",
                rootText_.c_str());

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
    sendFrame(socket_.fd(), type, payload, deadline_);
  } catch (const std::exception& e) {
    // The root may have said why before it closed: report that instead.
    std::string why = e.what();
    try {
      auto quick = platform::Clock::now() + std::chrono::milliseconds(100);
      Frame f = recvFrame(socket_.fd(), std::min(quick, deadline_));
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

Frame BootstrapClient::expect(FrameType type, const char* during) {
  Frame f;
  try {
    f = recvFrame(socket_.fd(), deadline_);
  } catch (const platform::TimeoutError&) {
    throw error(mclTimeout,
                "rank %d: timed out during %s with the rendezvous root at %s "
                "(are all ranks started, with the same nranks?)",
                rank_, during, rootText_.c_str());
  } catch (const platform::ConnectionClosed&) {
    throw error(mclRemoteError,
                "rank %d: the rendezvous root at %s closed the connection "
                "during %s",
                rank_, rootText_.c_str(), during);
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
    sendFrame(socket_.fd(), FrameType::Bye, {}, deadline_);
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
    f = recvFrame(socket_.fd(), Clock::now() + wait);
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
    sendFrame(socket_.fd(), FrameType::Failure,
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
