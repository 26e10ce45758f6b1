// The seven benchmarked operations (the six collectives and sendrecv): their
// element counts for a size, their in-place buffer layout (NCCL's rules), the
// call itself and the bus bandwidth factor, all as nccl-tests defines them.
#pragma once

#include <mcl/mcl.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "base/collective.h"

namespace mcl::perf {

// The collectives are the library's (base/collective.h); the benchmark
// adds how each one shows in the table.
struct CollectiveInfo {
  bool hasOp;    // the redop column shows the op (else "none")
  bool hasRoot;  // the root column shows the root (else -1)
  bool reduces;  // applies the op to the data
};

const CollectiveInfo& collectiveInfo(Collective c);

// The collective as mclCommGetAlgorithm names it; none for send/recv.
std::optional<mclFunc_t> funcOf(Collective c);
std::optional<Collective> parseCollective(std::string_view name);
// The seven benchmarked operations, in nccl-tests' order.
std::span<const Collective> benchmarkedCollectives();
// "allreduce, allgather, ..." for messages.
const char* collectiveNameList();

// Element counts of one call, nccl-tests' getCollByteCount.
struct CollCounts {
  size_t sendCount = 0;
  size_t recvCount = 0;
  size_t paramCount = 0;         // the count argument of the call
  size_t sendInPlaceOffset = 0;  // times rank, in elements from recvbuff
  size_t recvInPlaceOffset = 0;  // times rank, in elements from recvbuff
};

// For a size in bytes: allgather and reducescatter split it over the ranks
// (each rank's part rounded down to 16 bytes), the others use it whole.
CollCounts collCounts(Collective c, size_t bytes, size_t elementSize,
                      int nranks);

struct CallBuffers {
  void* send;
  void* recv;
};

// The buffers of one call: out of place, sendBase and recvBase shifted by
// shift bytes; in place, both inside recvBase as NCCL requires.
CallBuffers callBuffers(const CollCounts& counts, bool inPlace, int rank,
                        size_t elementSize, char* sendBase, char* recvBase,
                        size_t shift);

struct CallResult {
  mclResult_t result;
  const char* call;  // the mcl function that returned result
};

// One blocking call (NULL stream). Sendrecv sends to rank + 1 and receives
// from rank - 1 in one group.
CallResult runCollective(Collective c, const CallBuffers& buffers, size_t count,
                         mclDataType_t type, mclRedOp_t op, int root,
                         mclComm_t comm, int rank, int nranks);

// algbw and busbw in GB/s (1e9 bytes) for one call taking seconds.
void bandwidth(Collective c, const CollCounts& counts, size_t elementSize,
               double seconds, int nranks, double* algBw, double* busBw);

}  // namespace mcl::perf
