// Point-to-point measurements between two ranks of a communicator: round
// trips of a small message, and the one-way bandwidth of a stream of large
// ones. Calls fail softly (an mclResult_t and the library's message) so
// that `qualify` can call a cable dead instead of ending the run.
#pragma once

#include <mcl/mcl.h>

#include <cstddef>
#include <string>

#include "common/sample_stats.h"

namespace mcl::perf {

struct ProbeResult {
  mclResult_t result = mclSuccess;
  const char* call = "";  // the failing mcl call
  std::string error;      // "<call>: <mclGetLastError>", when failed
  bool ok() const { return result == mclSuccess; }
};

// Round trips of `bytes` between this rank and `peer` (ranks of comm):
// the starter sends first and times each round trip; warmup are untimed.
// On the starter, *summary holds microseconds per round trip.
ProbeResult roundTrips(mclComm_t comm, int peer, bool starter, size_t bytes,
                       int count, int warmup, char* buffer,
                       SampleSummary* summary);

// A stream from `sender` to `receiver` (ranks of comm; this rank is one of
// them) of messageBytes messages for about targetSeconds, sized by a first
// timed message and agreed by both. On the sender, *gbps is the bytes
// moved per second (1e9), from the first send to the receiver's
// acknowledgement of the last.
ProbeResult streamBandwidth(mclComm_t comm, int me, int sender, int receiver,
                            size_t messageBytes, double targetSeconds,
                            char* buffer, double* gbps);

}  // namespace mcl::perf
