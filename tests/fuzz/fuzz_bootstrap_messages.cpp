// The rendezvous byte stream as the root and the ranks read it: frames
// taken one by one from a buffer (takeFrame), each payload decoded as its
// type says. Defects must be mclRemoteError; a payload that decodes must
// encode back to the same bytes (the format has one encoding per message)
// and stay within the protocol's limits.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/sealed_channel.h"
#include "base/session_keys.h"
#include "core/bootstrap/bootstrap_protocol.h"
#include "fuzz_check.h"

namespace {

using mcl::fuzz::acceptedOr;
using mcl::fuzz::check;
using Bytes = std::vector<uint8_t>;

bool hostTextFits(const std::string& s) {
  return s.size() <= mcl::kMaxHostText;
}

void decodePayload(const mcl::Frame& f) {
  const Bytes& p = f.payload;
  switch (f.type) {
    case mcl::FrameType::AuthProof:
      acceptedOr(mclRemoteError, [&] {
        check(encode(mcl::decodeAuthProof(p)) == p, "AuthProof round trip");
      });
      break;
    case mcl::FrameType::Hello:
      acceptedOr(mclRemoteError, [&] {
        mcl::Hello h = mcl::decodeHello(p);
        check(hostTextFits(h.hostId) && hostTextFits(h.hostName),
              "Hello host text within kMaxHostText");
        check(encode(h) == p, "Hello round trip");
      });
      break;
    case mcl::FrameType::Welcome:
      acceptedOr(mclRemoteError, [&] {
        mcl::Welcome w = mcl::decodeWelcome(p);
        check(!w.peers.empty() && w.peers.size() <= (1u << 16),
              "Welcome has 1..65536 ranks");
        for (const mcl::PeerInfo& peer : w.peers)
          check(hostTextFits(peer.hostId) && hostTextFits(peer.hostName),
                "Welcome host text within kMaxHostText");
        check(encode(w) == p, "Welcome round trip");
      });
      break;
    case mcl::FrameType::Failure:
      acceptedOr(mclRemoteError, [&] {
        mcl::Failure failure = mcl::decodeFailure(p);
        check(failure.message.size() <= 4096, "Failure text within 4 KiB");
        check(encode(failure) == p, "Failure round trip");
      });
      break;
    case mcl::FrameType::AllGather:
    case mcl::FrameType::AllGatherResult:
      acceptedOr(mclRemoteError, [&] {
        mcl::AllGatherMessage m = mcl::decodeAllGather(p);
        for (const Bytes& part : m.parts)
          check(part.size() <= mcl::kMaxAllGatherBytes,
                "all-gather part within kMaxAllGatherBytes");
        check(encode(m) == p, "AllGather round trip");
      });
      break;
    case mcl::FrameType::Sealed: {
      // Bytes nobody sealed with this connection's key never open.
      static const mcl::SessionKey key{};
      mcl::Opener opener(key);
      acceptedOr(mclRemoteError,
                 [&] { mcl::openSealedFrame(opener, f, "the fuzzer"); });
      break;
    }
    case mcl::FrameType::Challenge:  // raw nonce, length checked by the rank
    case mcl::FrameType::AuthOk:     // raw MAC, likewise
    case mcl::FrameType::Rejected:   // nothing but the fact
    case mcl::FrameType::Bye:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes buffer(data, data + size);
  while (true) {
    const size_t before = buffer.size();
    mcl::Frame f;
    bool taken = false;
    // A bad header ends the connection: nothing after it is read.
    if (!acceptedOr(mclRemoteError,
                    [&] { taken = mcl::takeFrame(buffer, &f); }))
      break;
    if (!taken) {
      check(buffer.size() == before, "an incomplete frame stays buffered");
      break;
    }
    check(f.payload.size() <= mcl::kMaxFrameBytes, "frame within the limit");
    check(before - buffer.size() == 8 + f.payload.size(),
          "a frame takes its header and payload, no more");
    check(strcmp(mcl::frameTypeName(f.type), "unknown") != 0,
          "a taken frame has a known type");
    decodePayload(f);
  }
  return 0;
}
