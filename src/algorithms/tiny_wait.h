// How the tiny paths (tiny_allreduce.h, tiny_allgather.h) wait for a
// peer's piece before they hand the rest to steps.
#pragma once

#include <cstddef>
#include <span>

#include "algorithms/context.h"
#include "transports/transport.h"

namespace mcl {

// The piece at the head of c once it holds `bytes`, or what is there (less)
// when the peer is slow. Where every rank has a core, spins a few
// microseconds, about what a peer that is already in the call needs. Where
// ranks outnumber cores (a short spin budget says so), the peer needs this
// core to send at all: yields between looks, a few times.
std::span<const std::byte> pollPiece(transport::Connection& c, size_t bytes,
                                     const AlgoContext& ctx);

}  // namespace mcl
