#include "bench/collective_check.h"

#include <cstddef>
#include <cstdint>

#include "common/data_check.h"
#include "common/dtype.h"

namespace mcl::perf {

namespace {

Pattern patternOf(const CheckCase& c) {
  return makePattern(c.type, c.op, collectiveInfo(c.collective).reduces,
                     c.nranks, c.seed);
}

CallBuffers buffersOf(const CheckCase& c, char* sendBase, char* recvBase) {
  return callBuffers(c.counts, c.inPlace, c.rank, typeSize(c.type), sendBase,
                     recvBase, 0);
}

}  // namespace

void prepareCheck(const CheckCase& c, char* sendBase, char* recvBase) {
  const CallBuffers b = buffersOf(c, sendBase, recvBase);
  const Pattern p = patternOf(c);
  // Poison first: in place, the input lives inside the output region.
  fillPoison(b.recv, c.type, c.counts.recvCount);
  if (c.collective == Collective::Broadcast && c.rank != c.root) return;
  fillInput(b.send, c.type, p, c.rank, 0, c.counts.sendCount);
}

int64_t countWrongElements(const CheckCase& c, char* sendBase, char* recvBase) {
  const CallBuffers b = buffersOf(c, sendBase, recvBase);
  const Pattern p = patternOf(c);
  const size_t size = typeSize(c.type);
  const size_t count = c.counts.recvCount;
  const auto input = [&](int rank, size_t index) {
    return valueBits(c.type, inputValue(p, rank, index));
  };
  const auto reduced = [&](size_t index) {
    return reducedBits(p, c.type, c.op, index);
  };

  switch (c.collective) {
    case Collective::AllReduce:
      return countWrong(b.recv, size, count, reduced);
    case Collective::Reduce:
      if (c.rank == c.root) return countWrong(b.recv, size, count, reduced);
      if (c.inPlace)
        return countWrong(b.recv, size, count,
                          [&](size_t i) { return input(c.rank, i); });
      return countWrong(b.recv, size, count,
                        [&](size_t) { return poisonBits(c.type); });
    case Collective::Broadcast:
      return countWrong(b.recv, size, count,
                        [&](size_t i) { return input(c.root, i); });
    case Collective::AllGather: {
      const size_t part = c.counts.sendCount;
      return countWrong(b.recv, size, count, [&](size_t i) {
        return input(static_cast<int>(i / part), i % part);
      });
    }
    case Collective::ReduceScatter: {
      const size_t first = static_cast<size_t>(c.rank) * c.counts.recvCount;
      return countWrong(b.recv, size, count,
                        [&](size_t i) { return reduced(first + i); });
    }
    case Collective::AllToAll: {
      // Block q holds what rank q sent to this rank.
      const size_t part = c.counts.paramCount;
      const size_t mine = static_cast<size_t>(c.rank) * part;
      return countWrong(b.recv, size, count, [&](size_t i) {
        return input(static_cast<int>(i / part), mine + i % part);
      });
    }
    case Collective::SendRecv:
      break;
    case Collective::Barrier:  // not benchmarked (parseCollective)
    case Collective::Send:
    case Collective::Recv:
      return size_t{0};
  }
  const int prev = (c.rank - 1 + c.nranks) % c.nranks;
  return countWrong(b.recv, size, count,
                    [&](size_t i) { return input(prev, i); });
}

}  // namespace mcl::perf
