// Every operation mcl runs, as one enum with one table of names: the
// library (operations, the algorithm table, the tuner, MCL_ALGO), mcl-perf
// and the tests all use these. Header-only, so mcl-perf and the
// integration tests, which link only the public library, share it too.
#pragma once

#include <mcl/mcl.h>

#include <cstddef>
#include <optional>
#include <string_view>

namespace mcl {

enum class Collective : int {
  // The collectives with a choice of algorithms, numbered as mclFunc_t.
  AllReduce = mclFuncAllReduce,
  AllGather = mclFuncAllGather,
  Broadcast = mclFuncBroadcast,
  Reduce = mclFuncReduce,
  ReduceScatter = mclFuncReduceScatter,
  AllToAll = mclFuncAlltoAll,
  Barrier,
  Send,
  Recv,
  // A send and a receive to the ring neighbours in one group: what
  // nccl-tests' sendrecv measures. The library runs it as Send and Recv.
  SendRecv,
};

// The first kTunedCollectives collectives have a choice of algorithms.
constexpr size_t kTunedCollectives = mclNumFuncs;
constexpr size_t kCollectiveKinds = size_t(Collective::SendRecv) + 1;

struct CollectiveNames {
  Collective collective;
  const char* id;     // "allreduce": MCL_ALGO, mcl-perf's commands
  const char* prose;  // "all-reduce": messages
  const char* title;  // "AllReduce": test names
};

inline constexpr CollectiveNames kCollectiveNames[kCollectiveKinds] = {
    {Collective::AllReduce, "allreduce", "all-reduce", "AllReduce"},
    {Collective::AllGather, "allgather", "all-gather", "AllGather"},
    {Collective::Broadcast, "broadcast", "broadcast", "Broadcast"},
    {Collective::Reduce, "reduce", "reduce", "Reduce"},
    {Collective::ReduceScatter, "reducescatter", "reduce-scatter",
     "ReduceScatter"},
    {Collective::AllToAll, "alltoall", "all-to-all", "AllToAll"},
    {Collective::Barrier, "barrier", "barrier", "Barrier"},
    {Collective::Send, "send", "send", "Send"},
    {Collective::Recv, "recv", "recv", "Recv"},
    {Collective::SendRecv, "sendrecv", "send/receive", "SendRecv"},
};

constexpr bool namesInOrder() {
  for (size_t i = 0; i < kCollectiveKinds; ++i)
    if (size_t(kCollectiveNames[i].collective) != i) return false;
  return true;
}
static_assert(namesInOrder(), "kCollectiveNames follows the enum");

constexpr const CollectiveNames& namesOf(Collective c) {
  return kCollectiveNames[size_t(c)];
}
constexpr const char* collectiveName(Collective c) { return namesOf(c).id; }
constexpr const char* collectiveProse(Collective c) { return namesOf(c).prose; }

// Whether the collective has a choice of algorithms (MCL_ALGO, the tuner).
constexpr bool hasAlgorithms(Collective c) {
  return size_t(c) < kTunedCollectives;
}
constexpr bool isPointToPoint(Collective c) {
  return c == Collective::Send || c == Collective::Recv ||
         c == Collective::SendRecv;
}

// The collective a name (as in collectiveName) stands for.
constexpr std::optional<Collective> collectiveNamed(std::string_view id) {
  for (const CollectiveNames& n : kCollectiveNames)
    if (id == n.id) return n.collective;
  return std::nullopt;
}

}  // namespace mcl
