// What a TCP peer sends that this side decodes; the first byte picks which:
//   0  the stream hello after the handshake (tcp_handshake.h): 24 bytes
//      sealed with the socket's keys, 40 on the wire
//   1  the endpoint list all-gathered at init (link_choice.h), then the
//      choice of links against a fixed host, which must come out the same
//      from both ends (they connect and accept by it)
//   2  the 8-byte header before each piece on a socket (tcp_connection.h)
//   3  what a broken socket still holds, scanned for the peer's farewell
//      (farewell_scan.h): in one piece and byte by byte, the same answer
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_check.h"
#include "transports/tcp/farewell_scan.h"
#include "transports/tcp/link_choice.h"
#include "transports/tcp/piece_seal.h"
#include "transports/tcp/tcp_connection.h"
#include "transports/tcp/tcp_handshake.h"

namespace {

namespace tcp = mcl::transport::tcp;
using mcl::fuzz::acceptedOr;
using mcl::fuzz::check;
using Bytes = std::vector<uint8_t>;

uint64_t bigEndian64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

void streamHello(const uint8_t* data, size_t size) {
  if (size < tcp::kHelloBytes) return;  // the listener reads exactly 40
  mcl::Secret secret{};
  mcl::Nonce server{}, client{};
  const uint64_t ours = 0x0123456789abcdefull;
  const mcl::SessionKeys acceptor =
      tcp::streamKeys(secret, ours, server, client, false);
  const mcl::SessionKeys connector =
      tcp::streamKeys(secret, ours, server, client, true);
  tcp::StreamKey key;
  // Bytes nobody sealed with the socket's keys are never a hello.
  check(!tcp::decodeHello(acceptor, data, ours, &key),
        "an unsealed hello is refused");
  // What the connector seals (any stream) opens as itself, and names only
  // its own communicator.
  const uint64_t named = bigEndian64(data);
  tcp::StreamKey sent;
  sent.rank = static_cast<int32_t>(data[8]);
  sent.channel = data[9];
  sent.link = data[10];
  sent.stripe = data[11];
  const Bytes sealed = tcp::encodeHello(connector, named, sent);
  check(sealed.size() == tcp::kHelloBytes, "a hello is kHelloBytes long");
  check(
      tcp::decodeHello(acceptor, sealed.data(), ours, &key) == (named == ours),
      "a sealed hello is accepted exactly when it names our communicator");
}

tcp::Endpoint endpoint(const char* name, const char* host, int prefix,
                       bool loopback = false) {
  tcp::Endpoint e;
  e.interfaceName = name;
  e.address = mcl::platform::SocketAddress::fromNumeric(host, 5000);
  e.prefixLength = prefix;
  e.loopback = loopback;
  return e;
}

// A Mac with a loopback, a LAN and two Thunderbolt cables, IPv4 and IPv6.
const std::vector<tcp::Endpoint>& localHost() {
  static const std::vector<tcp::Endpoint> host = {
      endpoint("lo0", "127.0.0.1", 8, true), endpoint("lo0", "::1", 128, true),
      endpoint("en0", "192.168.1.10", 24),   endpoint("en2", "10.0.1.1", 30),
      endpoint("en3", "10.0.2.1", 30),       endpoint("en2", "fd00::1", 126),
      endpoint("en0", "fe80::1", 64)};
  return host;
}

// Each link as its two addresses, lower first: what both ends sort by. (A
// pair of hosts that both have addresses x and y has links x->y and y->x
// under one key, in either order.)
std::vector<std::pair<std::string, std::string>> addressPairs(
    const std::vector<tcp::Link>& links) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const tcp::Link& l : links) {
    std::string a = l.local.address.toString();
    std::string b = l.remote.address.toString();
    out.emplace_back(std::min(a, b), std::max(a, b));
  }
  return out;
}

// Both ends run chooseLinks with the lists swapped; the connector opens
// one socket set per link and the acceptor waits for as many, so the two
// answers must agree: the same address pairs in the same order for cables
// and a LAN, one routed or loopback link each.
void checkBothEndsAgree(const std::vector<tcp::Endpoint>& a,
                        const std::vector<tcp::Endpoint>& b, bool sameHost) {
  std::vector<tcp::Link> ab = tcp::chooseLinks(a, b, sameHost);
  std::vector<tcp::Link> ba = tcp::chooseLinks(b, a, sameHost);
  check(ab.size() == ba.size(), "both ends choose as many links");
  if (ab.empty()) return;
  check(ab.front().kind == ba.front().kind, "both ends choose one kind");
  for (const tcp::Link& l : ab)
    check(l.kind == ab.front().kind, "links of one kind only");
  if (ab.front().kind == tcp::LinkKind::Cable ||
      ab.front().kind == tcp::LinkKind::Lan)
    check(addressPairs(ab) == addressPairs(ba),
          "both ends pair the same addresses in the same order");
  tcp::cableLeftUnused(a, b, ab);
}

bool sameEndpoint(const tcp::Endpoint& x, const tcp::Endpoint& y) {
  return x.interfaceName == y.interfaceName &&
         x.address.toString() == y.address.toString() &&
         x.prefixLength == y.prefixLength && x.loopback == y.loopback &&
         x.allowed == y.allowed;
}

void endpointList(const uint8_t* data, size_t size) {
  std::vector<tcp::Endpoint> peer;
  if (!acceptedOr(mclRemoteError, [&] {
        peer = tcp::decodeEndpoints(Bytes(data, data + size));
      }))
    return;
  check(peer.size() <= 256, "at most 256 endpoints");
  std::vector<tcp::Endpoint> again =
      tcp::decodeEndpoints(tcp::encodeEndpoints(peer));
  check(again.size() == peer.size(), "endpoint count round trip");
  for (size_t i = 0; i < peer.size(); ++i) {
    check(peer[i].interfaceName.size() <= 64, "interface name within 64");
    check(sameEndpoint(peer[i], again[i]), "endpoint round trip");
  }
  for (bool sameHost : {false, true}) {
    checkBothEndsAgree(localHost(), peer, sameHost);
    checkBothEndsAgree(peer, peer, sameHost);
  }
}

void pieceHeader(const uint8_t* data, size_t size) {
  // header (8), the piece the socket expects next (8), slot size (4)
  if (size < 20) return;
  tcp::PieceHeader h;
  memcpy(&h, data, sizeof(h));
  uint64_t piece = bigEndian64(data + 8);
  uint32_t slotBytes = 0;
  memcpy(&slotBytes, data + 16, sizeof(slotBytes));
  if (tcp::pieceHeaderExpected(h, piece, slotBytes))
    check(h.length > 0 && h.length <= slotBytes &&
              h.piece == static_cast<uint32_t>(piece),
          "an accepted piece header fits one slot and is the next piece");
}

// Where the reading stood (1 byte: header, payload or text, and how far),
// the slot size (4; its top bit: frames end in a 16-byte tag, as under
// wire protection), then the stream.
tcp::FarewellScan scanFrom(const uint8_t* data, uint32_t slotBytes,
                           std::span<const std::byte> partial) {
  const size_t tag = (slotBytes >> 31) != 0 ? tcp::kPieceTagBytes : 0;
  switch (data[0] % 3) {
    case 0:
      return tcp::FarewellScan::inHeader(
          partial.first(std::min<size_t>(partial.size(), data[0] / 3 % 8)),
          slotBytes, tag);
    case 1:
      return tcp::FarewellScan::inPayload(data[0] / 3, slotBytes, tag);
    default:
      return tcp::FarewellScan::inFarewell(
          partial.first(std::min<size_t>(partial.size(), data[0] / 3)),
          slotBytes, tag);
  }
}

void farewellScan(const uint8_t* data, size_t size) {
  if (size < 5) return;
  uint32_t slotBytes = 0;
  memcpy(&slotBytes, data + 1, sizeof(slotBytes));
  const auto stream = std::as_bytes(std::span(data + 5, size - 5));
  tcp::FarewellScan whole = scanFrom(data, slotBytes, {});
  whole.feed(stream);
  tcp::FarewellScan bytewise = scanFrom(data, slotBytes, {});
  for (size_t i = 0; i < stream.size() && bytewise.wantsMore(); ++i)
    bytewise.feed(stream.subspan(i, 1));
  check(whole.farewell() == bytewise.farewell(),
        "the same farewell however the bytes arrive");
  check(whole.wantsMore() == bytewise.wantsMore(), "the same end");
  check(whole.piecesPassed() == bytewise.piecesPassed(),
        "the same pieces passed");
  check(whole.sealedFrame().size() == bytewise.sealedFrame().size(),
        "the same sealed frame");
  check(whole.sealedFrame().empty() ||
            whole.sealedFrame().size() ==
                tcp::kFarewellTextBytes + tcp::kPieceTagBytes ||
            whole.sealedFrame().size() == tcp::kFarewellTextBytes,
        "a sealed frame is whole");
  check(whole.farewell().size() <= tcp::kFarewellTextBytes,
        "a farewell within its frame");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  switch (data[0] % 4) {
    case 0:
      streamHello(data + 1, size - 1);
      break;
    case 1:
      endpointList(data + 1, size - 1);
      break;
    case 2:
      pieceHeader(data + 1, size - 1);
      break;
    default:
      farewellScan(data + 1, size - 1);
      break;
  }
  return 0;
}
