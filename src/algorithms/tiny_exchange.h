// What the tiny paths (tiny_allreduce.h, tiny_allgather.h) share: one
// piece to every peer, and the wait for a peer's piece before they hand
// the rest to steps.
#pragma once

#include <cstddef>
#include <span>

#include "algorithms/context.h"
#include "transports/transport.h"

namespace mcl {

// Sends bytes from `in` to every peer, rank + 1 first (as the direct
// algorithms do), once every ring has room; false, with nothing sent, when
// one has none (a peer far behind): then steps do all the work.
bool sendToEveryPeer(const std::byte* in, size_t bytes, const AlgoContext& ctx);

// The piece at the head of c once it holds `bytes`, or what is there (less)
// when the peer is slow. Where every rank has a core, spins a few
// microseconds, about what a peer that is already in the call needs. Where
// ranks outnumber cores (a short spin budget says so), the peer needs this
// core to send at all: yields between looks, a few times.
std::span<const std::byte> pollPiece(transport::Connection& c, size_t bytes,
                                     const AlgoContext& ctx);

}  // namespace mcl
