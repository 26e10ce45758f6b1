// A step is one streaming primitive of a schedule: bytes that come from a
// peer and/or a local buffer, are copied or reduced, and go to a peer and/or
// a local buffer, piece by piece as the connections allow. Every ring and
// chain algorithm is a list of steps, as in NCCL's send / recvReduceSend /
// recvReduceCopySend primitives.
#pragma once

#include <mcl/mcl.h>

#include <cstddef>
#include <cstdint>

#include "algorithms/op.h"
#include "transports/transport.h"

namespace mcl {

struct Step;

// A step that runs a small program of its own instead of streaming bytes:
// exchanges with its peers, then work on their memory in place (the
// zero-copy collectives). Its Step has bytes 1; done becomes 1 at the end.
class StepTask {
 public:
  virtual ~StepTask() = default;
  // Moves what it can now, never blocking for a peer; true if anything
  // moved. self is its step (kind and sequence, for messages). Throws
  // Error when the call fails.
  virtual bool progress(const Step& self) = 0;
  virtual bool finished() const = 0;
  // The exchange it waits on now (for the timeout's message and the check
  // for dead peers), or null.
  virtual const Step* waitingOn() const = 0;
};

struct Step {
  transport::Connection* recvFrom = nullptr;  // incoming bytes, if any
  transport::Connection* sendTo = nullptr;    // outgoing bytes, if any
  const std::byte* local = nullptr;  // source, or the reduction's operand
  std::byte* out = nullptr;          // where the result also lands
  size_t bytes = 0;
  size_t done = 0;
  bool reduce = false;      // incoming op local (else: copy); with no peer to
                            // receive from, out op local into out
  bool divide = false;      // avg: divide the result by `divisor`
  bool localFirst = false;  // no peer: out = local op out (else out op local)
  int divisor = 1;
  // Copies into `out` bypass the caches: the operation is too large for
  // its result to be read from them.
  bool streamOut = false;
  // recvFrom was told that this step's bytes belong at `out` (postRecv;
  // the executor does it for its lanes' plain receives).
  bool posted = false;
  StepTask* task = nullptr;  // when set, runs instead of the fields above
  // For messages: whom we wait on, and in which operation.
  int recvPeer = -1;
  int sendPeer = -1;
  Collective kind = Collective::Barrier;
  uint64_t sequence = 0;
  mclDataType_t type = mclUint8;
  mclRedOp_t op = mclSum;
};

// Moves as many pieces as the connections allow right now. Returns true if
// any byte moved. Never blocks.
bool progressStep(Step& step);

}  // namespace mcl
