#include "bench/collective_bench.h"

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace mcl::perf {

namespace {

constexpr CollectiveInfo kAllReduce{true, false, true};
constexpr CollectiveInfo kAllGather{false, false, false};
constexpr CollectiveInfo kBroadcast{false, true, false};
constexpr CollectiveInfo kReduce{true, true, true};
constexpr CollectiveInfo kReduceScatter{true, false, true};
constexpr CollectiveInfo kAllToAll{false, false, false};
// nccl-tests shows (and iterates) the op for sendrecv although it has none.
constexpr CollectiveInfo kSendRecv{true, false, false};

constexpr Collective kAll[] = {
    Collective::AllReduce, Collective::AllGather,     Collective::Broadcast,
    Collective::Reduce,    Collective::ReduceScatter, Collective::AllToAll,
    Collective::SendRecv,
};

// Each rank's part of a split size: count / nranks rounded down to a
// multiple of 16 bytes.
size_t splitCount(size_t count, size_t elementSize, int nranks) {
  const size_t perRank = count / static_cast<size_t>(nranks);
  const size_t align = elementSize < 16 ? 16 / elementSize : 1;
  return perRank & ~(align - 1);
}

}  // namespace

const CollectiveInfo& collectiveInfo(Collective c) {
  switch (c) {
    case Collective::AllReduce:
      return kAllReduce;
    case Collective::AllGather:
      return kAllGather;
    case Collective::Broadcast:
      return kBroadcast;
    case Collective::Reduce:
      return kReduce;
    case Collective::ReduceScatter:
      return kReduceScatter;
    case Collective::AllToAll:
      return kAllToAll;
    case Collective::SendRecv:
    case Collective::Barrier:  // not benchmarked (parseCollective)
    case Collective::Send:
    case Collective::Recv:
      break;
  }
  return kSendRecv;
}

std::optional<mclFunc_t> funcOf(Collective c) {
  if (!hasAlgorithms(c)) return std::nullopt;
  return mclFunc_t(int(c));  // numbered alike (base/collective.h)
}

std::span<const Collective> benchmarkedCollectives() { return kAll; }

std::optional<Collective> parseCollective(std::string_view name) {
  for (Collective c : kAll)
    if (name == collectiveName(c)) return c;
  return std::nullopt;
}

const char* collectiveNameList() {
  static const std::string list = [] {
    std::string names;
    for (Collective c : kAll)
      names += (names.empty() ? "" : ", ") + std::string(collectiveName(c));
    return names;
  }();
  return list.c_str();
}

CollCounts collCounts(Collective c, size_t bytes, size_t elementSize,
                      int nranks) {
  const size_t count = elementSize ? bytes / elementSize : 0;
  const auto n = static_cast<size_t>(nranks);
  CollCounts k;
  switch (c) {
    case Collective::AllGather: {
      const size_t base = splitCount(count, elementSize, nranks);
      k.sendCount = base;
      k.recvCount = base * n;
      k.paramCount = base;
      k.sendInPlaceOffset = base;
      return k;
    }
    case Collective::ReduceScatter: {
      const size_t base = splitCount(count, elementSize, nranks);
      k.sendCount = base * n;
      k.recvCount = base;
      k.paramCount = base;
      k.recvInPlaceOffset = base;
      return k;
    }
    case Collective::AllToAll: {
      // Each rank sends count/n to each; in place, both buffers coincide.
      const size_t base = splitCount(count, elementSize, nranks);
      k.sendCount = k.recvCount = base * n;
      k.paramCount = base;
      return k;
    }
    case Collective::AllReduce:
    case Collective::Broadcast:
    case Collective::Reduce:
    case Collective::SendRecv:
    case Collective::Barrier:  // not benchmarked (parseCollective)
    case Collective::Send:
    case Collective::Recv:
      break;
  }
  k.sendCount = k.recvCount = k.paramCount = count;
  return k;
}

CallBuffers callBuffers(const CollCounts& counts, bool inPlace, int rank,
                        size_t elementSize, char* sendBase, char* recvBase,
                        size_t shift) {
  char* recv = recvBase + shift;
  if (!inPlace) return {sendBase + shift, recv};
  const auto r = static_cast<size_t>(rank);
  return {recv + counts.sendInPlaceOffset * r * elementSize,
          recv + counts.recvInPlaceOffset * r * elementSize};
}

CallResult runCollective(Collective c, const CallBuffers& b, size_t count,
                         mclDataType_t type, mclRedOp_t op, int root,
                         mclComm_t comm, int rank, int nranks) {
  switch (c) {
    case Collective::AllReduce:
      return {mclAllReduce(b.send, b.recv, count, type, op, comm, nullptr),
              "mclAllReduce"};
    case Collective::AllGather:
      return {mclAllGather(b.send, b.recv, count, type, comm, nullptr),
              "mclAllGather"};
    case Collective::Broadcast:
      return {mclBroadcast(b.send, b.recv, count, type, root, comm, nullptr),
              "mclBroadcast"};
    case Collective::Reduce:
      return {mclReduce(b.send, b.recv, count, type, op, root, comm, nullptr),
              "mclReduce"};
    case Collective::ReduceScatter:
      return {mclReduceScatter(b.send, b.recv, count, type, op, comm, nullptr),
              "mclReduceScatter"};
    case Collective::AllToAll:
      return {mclAlltoAll(b.send, b.recv, count, type, comm, nullptr),
              "mclAlltoAll"};
    case Collective::SendRecv:
      break;
    case Collective::Barrier:  // not benchmarked (parseCollective)
    case Collective::Send:
    case Collective::Recv:
      return {mclInvalidUsage, collectiveName(c)};
  }
  const int next = (rank + 1) % nranks;
  const int prev = (rank - 1 + nranks) % nranks;
  mclResult_t r = mclGroupStart();
  if (r != mclSuccess) return {r, "mclGroupStart"};
  r = mclSend(b.send, count, type, next, comm, nullptr);
  if (r != mclSuccess) return {r, "mclSend"};
  r = mclRecv(b.recv, count, type, prev, comm, nullptr);
  if (r != mclSuccess) return {r, "mclRecv"};
  return {mclGroupEnd(), "mclGroupEnd"};
}

void bandwidth(Collective c, const CollCounts& counts, size_t elementSize,
               double seconds, int nranks, double* algBw, double* busBw) {
  const double n = nranks;
  double bytes = static_cast<double>(counts.paramCount * elementSize);
  double factor = 1.0;
  switch (c) {
    case Collective::AllReduce:
      factor = 2.0 * (n - 1.0) / n;
      break;
    case Collective::AllGather:
    case Collective::ReduceScatter:
    case Collective::AllToAll:
      bytes *= n;
      factor = (n - 1.0) / n;
      break;
    case Collective::Broadcast:
    case Collective::Reduce:
    case Collective::SendRecv:
    case Collective::Barrier:  // not benchmarked (parseCollective)
    case Collective::Send:
    case Collective::Recv:
      break;
  }
  *algBw = bytes / 1.0e9 / seconds;
  *busBw = *algBw * factor;
}

}  // namespace mcl::perf
