#include "algorithms/zero_copy.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/algorithm_table.h"
#include "algorithms/collectives.h"
#include "algorithms/kernels/types.h"
#include "algorithms/zero_copy_work.h"
#include "base/error.h"
#include "base/log.h"

namespace mcl {

namespace {

// What a rank tells each peer of its buffers (plain bytes on the ring).
struct Offer {
  enum : uint32_t { kSendShared = 1, kRecvShared = 2, kInPlace = 4 };
  uint32_t flags = 0;
  uint32_t reserved = 0;
  SharedBufferRef send;
  SharedBufferRef recv;
};

// What a rank tells each peer once it mapped their buffers (a vote: any
// failure sends every rank the usual way), and once its share is done.
struct Flag {
  uint32_t failed = 0;
  uint32_t reserved = 0;
};

// Steps that move one small message to or from each peer; they progress
// together, in no order (each fits a ring slot).
class Exchange {
 public:
  void build(const AlgoContext& ctx, const Step& proto, const void* mine,
             void* theirs, size_t bytes) {
    steps_.clear();
    for (int p = 0; p < ctx.nranks; ++p) {
      if (p == ctx.rank) continue;
      Step send = proto;
      send.sendTo = ctx.peers[static_cast<size_t>(p)];
      send.sendPeer = p;
      send.local = static_cast<const std::byte*>(mine);
      send.bytes = bytes;
      steps_.push_back(send);
      Step recv = proto;
      recv.recvFrom = ctx.peers[static_cast<size_t>(p)];
      recv.recvPeer = p;
      recv.out = static_cast<std::byte*>(theirs) + bytes * size_t(p);
      recv.bytes = bytes;
      steps_.push_back(recv);
    }
  }
  // True when every message has moved.
  bool progress(bool* moved) {
    bool all = true;
    for (Step& s : steps_) {
      if (s.done < s.bytes) *moved |= progressStep(s);
      all &= s.done >= s.bytes;
    }
    return all;
  }
  const Step* waitingOn() const {
    for (const Step& s : steps_)
      if (s.done < s.bytes) return &s;
    return nullptr;
  }

 private:
  std::vector<Step> steps_;
};

class ZeroCopyTask final : public StepTask {
 public:
  ZeroCopyTask(const OpArgs& op, const AlgoContext& ctx) : op_(op), ctx_(ctx) {
    const size_t n = static_cast<size_t>(ctx.nranks);
    offers_.resize(n);
    votes_.resize(n);
    outcomes_.resize(n);
    Offer& mine = offers_[static_cast<size_t>(ctx.rank)];
    const SharedBufferMap& shared = *ctx.sharedBuffers;
    if (shared.find(op.sendbuff, sendBytes(op, ctx.nranks), &mine.send))
      mine.flags |= Offer::kSendShared;
    if (shared.find(op.recvbuff, recvBytes(op, ctx.nranks), &mine.recv))
      mine.flags |= Offer::kRecvShared;
    if (op.sendbuff == op.recvbuff) mine.flags |= Offer::kInPlace;
  }

  bool progress(const Step& self) override {
    bool moved = false;
    switch (phase_) {
      case Phase::Start:
        proto_.kind = self.kind;
        proto_.sequence = self.sequence;
        proto_.type = mclUint8;
        exchange_.build(ctx_, proto_, &offers_[size_t(ctx_.rank)],
                        offers_.data(), sizeof(Offer));
        phase_ = Phase::Offers;
        [[fallthrough]];
      case Phase::Offers:
        if (!exchange_.progress(&moved)) return moved;
        if (!everyBufferShared()) return startFallback();
        mapBuffers();
        exchange_.build(ctx_, proto_, &votes_[size_t(ctx_.rank)], votes_.data(),
                        sizeof(Flag));
        phase_ = Phase::Votes;
        moved = true;
        [[fallthrough]];
      case Phase::Votes:
        if (!exchange_.progress(&moved)) return moved;
        // Nothing is written yet: a rank that cannot map a buffer sends
        // every rank the usual way.
        for (const Flag& v : votes_)
          if (v.failed != 0) return startFallback();
        work();
        exchange_.build(ctx_, proto_, &outcomes_[size_t(ctx_.rank)],
                        outcomes_.data(), sizeof(Flag));
        phase_ = Phase::Outcomes;
        moved = true;
        [[fallthrough]];
      case Phase::Outcomes:
        if (!exchange_.progress(&moved)) return moved;
        finish();
        return true;
      case Phase::Fallback:
        return progressFallback();
      case Phase::Done:
        return moved;
    }
    return moved;
  }

  bool finished() const override { return phase_ == Phase::Done; }

  const Step* waitingOn() const override {
    if (phase_ == Phase::Fallback)
      return next_ < fallback_.size() ? &fallback_[next_] : nullptr;
    return exchange_.waitingOn();
  }

 private:
  enum class Phase { Start, Offers, Votes, Outcomes, Fallback, Done };

  bool everyBufferShared() const {
    const ZeroCopyNeeds needs = zeroCopyNeeds(op_.kind);
    for (size_t r = 0; r < offers_.size(); ++r) {
      const uint32_t f = offers_[r].flags;
      const bool isRoot = static_cast<int>(r) == op_.root;
      if ((needs.everySend || isRoot) && !(f & Offer::kSendShared))
        return false;
      if ((needs.everyRecv || (needs.rootRecv && isRoot)) &&
          !(f & Offer::kRecvShared))
        return false;
      // A rank's all-to-all input in place is overwritten while its peers
      // still read it.
      if (op_.kind == Collective::AllToAll && (f & Offer::kInPlace))
        return false;
    }
    return true;
  }

  // Maps every buffer the call needs into view_; on failure, votes no.
  void mapBuffers() {
    const ZeroCopyNeeds needs = zeroCopyNeeds(op_.kind);
    const int n = ctx_.nranks;
    view_.rank = ctx_.rank;
    view_.nranks = n;
    try {
      view_.send.assign(static_cast<size_t>(n), nullptr);
      view_.recv.assign(static_cast<size_t>(n), nullptr);
      for (int r = 0; r < n; ++r) {
        const size_t i = static_cast<size_t>(r);
        const bool isRoot = r == op_.root;
        const bool self = r == ctx_.rank;
        if (needs.everySend || isRoot)
          view_.send[i] = self ? static_cast<const std::byte*>(op_.sendbuff)
                               : ctx_.sharedBuffers->map(r, offers_[i].send,
                                                         sendBytes(op_, n));
        if (needs.everyRecv || (needs.rootRecv && isRoot))
          view_.recv[i] = self ? static_cast<std::byte*>(op_.recvbuff)
                               : ctx_.sharedBuffers->map(r, offers_[i].recv,
                                                         recvBytes(op_, n));
      }
      if (view_.recv[size_t(ctx_.rank)] == nullptr)
        view_.recv[size_t(ctx_.rank)] = static_cast<std::byte*>(op_.recvbuff);
    } catch (...) {
      MCL_LOG(Warn, kLogColl,
              "%s #%llu: %s; the call copies through the rings instead",
              collectiveProse(op_.kind),
              static_cast<unsigned long long>(proto_.sequence),
              asError(std::current_exception()).what());
      votes_[static_cast<size_t>(ctx_.rank)].failed = 1;
    }
  }

  // This rank's share; a failure (out of memory) is told to the peers.
  void work() {
    try {
      runZeroCopyShare(op_, view_);
    } catch (...) {
      failure_ = asError(std::current_exception()).what();
      outcomes_[static_cast<size_t>(ctx_.rank)].failed = 1;
    }
  }

  bool startFallback() {
    OpArgs plain = op_;
    plain.ringsOnly = true;
    appendSteps(plain, ctx_, fallback_);
    for (Step& s : fallback_) {
      s.kind = proto_.kind;
      s.sequence = proto_.sequence;
    }
    phase_ = Phase::Fallback;
    progressFallback();
    return true;
  }

  void finish() {
    if (!failure_.empty()) throw error(mclSystemError, "%s", failure_.c_str());
    for (size_t r = 0; r < outcomes_.size(); ++r)
      if (outcomes_[r].failed != 0)
        throw error(mclRemoteError,
                    "rank %d: %s #%llu ran in place on mclMemAlloc memory, "
                    "and rank %zu failed its share (its error says why): "
                    "the result is incomplete",
                    ctx_.rank, collectiveProse(op_.kind),
                    static_cast<unsigned long long>(proto_.sequence), r);
    ctx_.sharedBuffers->noteInPlaceCall();
    phase_ = Phase::Done;
  }

  bool progressFallback() {
    bool moved = false;
    while (next_ < fallback_.size()) {
      Step& s = fallback_[next_];
      moved |= progressStep(s);
      if (s.done < s.bytes) return moved;
      ++next_;
    }
    phase_ = Phase::Done;
    return true;
  }

  OpArgs op_;
  const AlgoContext& ctx_;
  Step proto_;  // the exchanges' template: kind and sequence
  Phase phase_ = Phase::Start;
  std::vector<Offer> offers_;
  std::vector<Flag> votes_;
  std::vector<Flag> outcomes_;
  InPlaceView view_;
  Exchange exchange_;
  std::string failure_;
  std::vector<Step> fallback_;
  size_t next_ = 0;
};

}  // namespace

bool appendZeroCopy(const OpArgs& op, const AlgoContext& ctx,
                    std::vector<Step>& steps) {
  // The size first: most calls of a training loop are small.
  if (ctx.sharedBuffers == nullptr || ctx.nranks < 2 ||
      std::max(sendBytes(op, ctx.nranks), recvBytes(op, ctx.nranks)) <
          ctx.zeroCopyMinBytes ||
      op.ringsOnly || op.preMultiply.active || op.op >= mclNumOps)
    return false;
  if (!hasAlgorithms(op.kind) ||
      ctx.forced[static_cast<size_t>(op.kind)] != Algorithm::Auto)
    return false;
  Step step;
  step.bytes = 1;
  ctx.call->tasks.push_back(std::make_shared<ZeroCopyTask>(op, ctx));
  step.task = ctx.call->tasks.back().get();
  steps.push_back(step);
  return true;
}

}  // namespace mcl
