#include "algorithms/zero_copy_work.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "algorithms/kernels/reduce.h"
#include "algorithms/kernels/stream_copy.h"
#include "algorithms/kernels/types.h"

namespace mcl {

namespace {

// Reductions go through a block that stays in the first-level cache: read
// every input once, write every output once.
constexpr size_t kBlockBytes = 16 * 1024;
// Outputs of calls this large are not read back from the caches soon.
constexpr size_t kStreamBytes = size_t{4} << 20;

void copyOut(std::byte* dst, const std::byte* src, size_t bytes, bool stream) {
  if (dst == src || bytes == 0) return;
  if (stream)
    kernels::streamCopy(dst, src, bytes);
  else
    std::memcpy(dst, src, bytes);
}

// Rank r's slice of count elements: boundaries on 64-byte lines, so two
// ranks never write one cache line.
void slice(size_t count, size_t elementBytes, int r, int n, size_t* begin,
           size_t* end) {
  const size_t unit = std::max<size_t>(1, 64 / elementBytes);
  auto edge = [&](int k) {
    size_t e = count / static_cast<size_t>(n) * static_cast<size_t>(k) +
               count % static_cast<size_t>(n) * static_cast<size_t>(k) /
                   static_cast<size_t>(n);
    return std::min(count, (e + unit - 1) / unit * unit);
  };
  *begin = edge(r);
  *end = r + 1 == n ? count : edge(r + 1);
}

// Folds count elements of every rank's input, from byte inAt on, in rank
// order, block by block, and writes each block to every output in `outs`
// from byte outAt on.
void reduceSlice(const OpArgs& op, const InPlaceView& v, size_t inAt,
                 size_t outAt, size_t count,
                 const std::vector<std::byte*>& outs, bool stream) {
  const size_t es = kernels::typeSize(op.type);
  alignas(64) std::byte block[kBlockBytes];
  const size_t perBlock = kBlockBytes / es;
  const int n = v.nranks;
  for (size_t done = 0; done < count; done += perBlock) {
    const size_t m = std::min(perBlock, count - done);
    const size_t off = inAt + done * es;
    if (n == 1)
      std::memcpy(block, v.send[0] + off, m * es);
    else
      kernels::reduce(block, v.send[0] + off, v.send[1] + off, m, op.type,
                      op.op);
    for (int i = 2; i < n; ++i)
      kernels::reduce(block, block, v.send[i] + off, m, op.type, op.op);
    if (op.op == mclAvg) kernels::divide(block, m, op.type, n);
    for (std::byte* out : outs)
      copyOut(out + outAt + done * es, block, m * es, stream);
  }
}

}  // namespace

ZeroCopyNeeds zeroCopyNeeds(Collective kind) {
  switch (kind) {
    case Collective::AllReduce:
      return {true, true, false};
    case Collective::Reduce:
      return {true, false, true};
    case Collective::Broadcast:
      return {false, false, false};
    default:  // reduce-scatter, all-gather, all-to-all: read, write own
      return {true, false, false};
  }
}

size_t sendBytes(const OpArgs& op, int nranks) {
  const size_t bytes = op.count * kernels::typeSize(op.type);
  const bool whole =
      op.kind == Collective::ReduceScatter || op.kind == Collective::AllToAll;
  return whole ? bytes * static_cast<size_t>(nranks) : bytes;
}

size_t recvBytes(const OpArgs& op, int nranks) {
  const size_t bytes = op.count * kernels::typeSize(op.type);
  const bool whole =
      op.kind == Collective::AllGather || op.kind == Collective::AllToAll;
  return whole ? bytes * static_cast<size_t>(nranks) : bytes;
}

void runZeroCopyShare(const OpArgs& op, const InPlaceView& v) {
  const size_t es = kernels::typeSize(op.type);
  const size_t blockBytes = op.count * es;  // one rank's block
  const int r = v.rank;
  const int n = v.nranks;
  const bool stream =
      std::max(sendBytes(op, n), recvBytes(op, n)) >= kStreamBytes;
  switch (op.kind) {
    case Collective::AllReduce:
    case Collective::Reduce: {
      size_t begin, end;
      slice(op.count, es, r, n, &begin, &end);
      std::vector<std::byte*> outs;
      if (op.kind == Collective::Reduce)
        outs.push_back(v.recv[static_cast<size_t>(op.root)]);
      else
        outs = v.recv;
      reduceSlice(op, v, begin * es, begin * es, end - begin, outs, stream);
      return;
    }
    case Collective::ReduceScatter: {
      const std::vector<std::byte*> outs{v.recv[static_cast<size_t>(r)]};
      reduceSlice(op, v, blockBytes * static_cast<size_t>(r), 0, op.count, outs,
                  stream);
      return;
    }
    case Collective::AllGather:
      for (int i = 0; i < n; ++i)
        copyOut(v.recv[static_cast<size_t>(r)] + blockBytes * size_t(i),
                v.send[static_cast<size_t>(i)], blockBytes, stream);
      return;
    case Collective::Broadcast:
      copyOut(v.recv[static_cast<size_t>(r)],
              v.send[static_cast<size_t>(op.root)], blockBytes, stream);
      return;
    case Collective::AllToAll:
      for (int i = 0; i < n; ++i)
        copyOut(v.recv[static_cast<size_t>(r)] + blockBytes * size_t(i),
                v.send[static_cast<size_t>(i)] + blockBytes * size_t(r),
                blockBytes, stream);
      return;
    default:
      return;
  }
}

}  // namespace mcl
