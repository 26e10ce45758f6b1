#include "algorithms/executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <thread>

#include "base/error.h"
#include "platform/cpu.h"

namespace mcl {

namespace {

using Clock = std::chrono::steady_clock;
// While spinning, a yield every this many polls (a few microseconds), or
// at every look at the clock where the ranks are crowded.
constexpr uint32_t kSpinsPerYield = 512;
constexpr int64_t kSleepSliceNs = 50'000'000;  // re-check abort and peers
constexpr int64_t kPeerCheckIntervalNs = 1'000'000;

// A network connection may still hold committed bytes when the last step
// is done; the operation completes only once they are handed over.
bool flushLane(Lane& lane, bool* moved) {
  bool all = true;
  for (Step& s : lane.steps) {
    if (s.sendTo == nullptr || s.sendTo->drained()) continue;
    uint64_t before = s.sendTo->bytesHandedOver();
    s.sendTo->progress();
    *moved |= s.sendTo->bytesHandedOver() != before;
    all &= s.sendTo->drained();
  }
  if (all)
    for (Step& s : lane.steps)
      if (s.sendTo != nullptr) s.sendTo->releaseCallerMemory();
  return all;
}

// A plain receive lands where it belongs: a network transport reads it
// from its socket straight into `out` (its pieces then peek as `out`'s own
// bytes, and progressStep's copy is skipped). Posted when the step starts,
// as the connection's one reader; PostedReceives ends it.
void postPlainReceive(Step& s) {
  if (s.posted || s.done != 0 || s.task != nullptr || s.recvFrom == nullptr ||
      s.sendTo != nullptr || s.reduce || s.divide || s.out == nullptr)
    return;
  s.recvFrom->postRecv(s.out, s.bytes);
  s.posted = true;
}

bool progressLane(Lane& lane) {
  bool moved = false;
  while (!lane.stepsDone()) {
    Step& step = lane.steps[lane.next];
    postPlainReceive(step);
    moved |= progressStep(step);
    if (step.done < step.bytes) break;
    if (step.posted) {
      // Every byte of it is read: nothing more may go to its memory.
      step.recvFrom->withdrawRecv();
      step.posted = false;
    }
    ++lane.next;
  }
  if (lane.stepsDone() && !lane.flushed) lane.flushed = flushLane(lane, &moved);
  return moved;
}

bool progressAll(std::span<Lane> lanes, bool* allDone) {
  bool moved = false;
  bool done = true;
  for (Lane& lane : lanes) {
    if (lane.done()) continue;
    moved |= progressLane(lane);
    done &= lane.done();
  }
  *allDone = done;
  return moved;
}

Lane& firstStuck(std::span<Lane> lanes) {
  for (Lane& lane : lanes)
    if (!lane.done()) return lane;
  return lanes.front();
}

// The exchange a step waits on: a task's current one, or the step.
const Step& waitedOn(const Step& step) {
  if (step.task != nullptr && step.task->waitingOn() != nullptr)
    return *step.task->waitingOn();
  return step;
}

std::string describeWait(const Lane& lane) {
  if (lane.stepsDone()) {
    const Step& last = lane.steps.back();
    return std::string(collectiveProse(last.kind)) + " #" +
           std::to_string(last.sequence) +
           ": waiting for a peer to take the last bytes sent";
  }
  const Step& s = waitedOn(lane.steps[lane.next]);
  std::string what =
      std::string(collectiveProse(s.kind)) + " #" + std::to_string(s.sequence) +
      " (step " + std::to_string(lane.next + 1) + " of " +
      std::to_string(lane.steps.size()) + ", " + std::to_string(s.done) +
      " of " + std::to_string(s.bytes) + " bytes done)";
  // The links to that peer that are down, if the side channel knows.
  const auto note = [&lane](int peer) {
    const transport::PeerHealth* health = lane.context->health;
    return health != nullptr ? health->linkNote(peer) : std::string();
  };
  if (s.recvFrom != nullptr && s.recvFrom->peekRecv().empty())
    return what + " waiting for data from rank " + std::to_string(s.recvPeer) +
           " via " + s.recvFrom->linkName() + note(s.recvPeer);
  if (s.sendTo != nullptr)
    return what + " waiting for room to send to rank " +
           std::to_string(s.sendPeer) + " via " + s.sendTo->linkName() +
           note(s.sendPeer);
  return what;
}

// What a rank says when a peer's farewell ends its wait. A peer that gave
// up names whom it waited on, which may be this rank or a bystander, while
// the cause may lie further on: four ranks in a ring, rank 2 stops; rank 0,
// waiting on rank 3, times out first; rank 1 hears rank 0's farewell, which
// names rank 3 only. What this rank itself waits on leads on, so it comes
// first (a farewell is cut to a few hundred bytes), then the peer's words.
constexpr const char* kWaitsOn = "; this rank waits on: ";
constexpr const char* kPeerSaid = ". Its farewell: ";

std::string peerReasonText(const Lane& lane, int peer,
                           const std::string& reason) {
  const std::string head = "rank " + std::to_string(lane.context->rank) +
                           ": peer rank " + std::to_string(peer);
  const std::string wait = describeWait(lane);
  if (reason.find(" gave up: ") == std::string::npos ||
      wait.find("rank " + std::to_string(peer) + " via ") != std::string::npos)
    return head + " is gone (" + reason + ")";
  return head + " gave up" + kWaitsOn + wait + kPeerSaid + reason;
}

[[noreturn]] void throwPeerGone(const Lane& lane, const Step& s, int peer,
                                const transport::Connection& link) {
  throw error(mclRemoteError, "%s, during %s #%llu; link %s",
              peerReasonText(lane, peer, link.peerGoneReason()).c_str(),
              collectiveProse(s.kind),
              static_cast<unsigned long long>(s.sequence), link.linkName());
}

// The side channel says the peer a step waits on will not answer: its
// process died, it stopped answering, or it gave up.
[[noreturn]] void throwPeerSilent(const Lane& lane, const Step& s, int peer,
                                  const transport::Connection& link,
                                  const std::string& problem) {
  const std::string farewell = lane.context->health->farewellOf(peer);
  const std::string text =
      farewell.empty()
          ? "rank " + std::to_string(lane.context->rank) + ": " + problem
          : peerReasonText(lane, peer, farewell);
  throw error(mclRemoteError, "%s, during %s #%llu; link %s", text.c_str(),
              collectiveProse(s.kind),
              static_cast<unsigned long long>(s.sequence), link.linkName());
}

[[noreturn]] void throwLinkTrouble(const Lane& lane, const Step& s, int peer,
                                   const transport::Connection& link,
                                   const std::string& trouble) {
  throw error(mclRemoteError,
              "rank %d: no path to rank %d is left: %s, during %s #%llu; "
              "link %s",
              lane.context->rank, peer, trouble.c_str(),
              collectiveProse(s.kind),
              static_cast<unsigned long long>(s.sequence), link.linkName());
}

// Links that are up but carry nothing (the kernel's view of them): no
// path left to the peer. A link the OS says is down is the side channel's
// cable watch's to judge (it may come back, or a LAN may serve).
void checkLinksCarry(const Lane& lane, const Step& s, int peer,
                     transport::Connection& link) {
  const transport::PeerHealth* health = lane.context->health;
  if (health != nullptr && !health->linkNote(peer).empty()) return;
  if (std::string t = link.linkTrouble(); !t.empty())
    throwLinkTrouble(lane, s, peer, link, t);
}

// Connections no step waits on now may hold pieces a peer waits for, on a
// cable lost meanwhile (Connection::tend). A failure found there is said
// by the step that waits on that connection, if any.
void tendConnections(std::span<Lane> lanes) {
  const AlgoContext* tended = nullptr;
  for (const Lane& lane : lanes) {
    if (lane.done() || lane.context == tended) continue;
    tended = lane.context;
    for (const auto* list : {&tended->peers, &tended->p2pPeers})
      for (transport::Connection* c : *list)
        if (c != nullptr) c->tend();
  }
}

void checkAbortAndPeers(std::span<Lane> lanes) {
  for (const Lane& lane : lanes) {
    if (lane.done()) continue;
    const AlgoContext& ctx = *lane.context;
    if (ctx.aborted != nullptr && ctx.aborted->load(std::memory_order_relaxed))
      throw error(mclRemoteError, "rank %d: %s was aborted (mclCommAbort)",
                  ctx.rank, collectiveProse(lane.steps.back().kind));
    if (lane.stepsDone()) {
      // Flushing the last bytes: fail if their receiver is gone.
      for (const Step& s : lane.steps) {
        if (s.sendTo == nullptr || s.sendTo->drained()) continue;
        if (!s.sendTo->peerAcceptsSends())
          throwPeerGone(lane, s, s.sendPeer, *s.sendTo);
        if (ctx.health != nullptr)
          if (std::string p = ctx.health->problemWith(s.sendPeer); !p.empty())
            throwPeerSilent(lane, s, s.sendPeer, *s.sendTo, p);
        checkLinksCarry(lane, s, s.sendPeer, *s.sendTo);
      }
      continue;
    }
    const Step& s = waitedOn(lane.steps[lane.next]);
    // A peer that exited after handing over everything is no failure: only
    // one we still wait on is. Liveness is read before the ring, so data
    // published before the exit is seen.
    if (s.recvFrom != nullptr && !s.recvFrom->peerAlive() &&
        s.recvFrom->peekRecv().empty())
      throwPeerGone(lane, s, s.recvPeer, *s.recvFrom);
    if (s.sendTo != nullptr && !s.sendTo->peerAcceptsSends() &&
        s.sendTo->acquireSend(1).empty())
      throwPeerGone(lane, s, s.sendPeer, *s.sendTo);
    // A stalled step whose peer died or stopped cannot complete, whichever
    // of its peers it waits on now. (Asking a link for room would hold an
    // acquired send, which keeps its farewell from going out: not asked.)
    if (ctx.health != nullptr) {
      if (s.recvFrom != nullptr && s.recvFrom->peekRecv().empty())
        if (std::string p = ctx.health->problemWith(s.recvPeer); !p.empty())
          throwPeerSilent(lane, s, s.recvPeer, *s.recvFrom, p);
      if (s.sendTo != nullptr)
        if (std::string p = ctx.health->problemWith(s.sendPeer); !p.empty())
          throwPeerSilent(lane, s, s.sendPeer, *s.sendTo, p);
    }
    if (s.recvFrom != nullptr && s.recvFrom->peekRecv().empty())
      checkLinksCarry(lane, s, s.recvPeer, *s.recvFrom);
    if (s.sendTo != nullptr && s.sendTo != s.recvFrom)
      checkLinksCarry(lane, s, s.sendPeer, *s.sendTo);
  }
}

// How long a rank that timed out listens for the farewell of the peer it
// waited on: a tenth of the timeout, within [50 ms, 1 s].
int64_t farewellGraceNs(int64_t timeoutNs) {
  return std::clamp<int64_t>(timeoutNs / 10, 50'000'000, 1'000'000'000);
}

// Every peer of the lanes' communicators hears why this rank stops.
void sayFarewells(std::span<Lane> lanes, const std::string& reason) {
  for (const Lane& lane : lanes) {
    const AlgoContext& ctx = *lane.context;
    if (ctx.health != nullptr) ctx.health->sayFarewell(reason);
    for (const auto* list : {&ctx.peers, &ctx.p2pPeers})
      for (size_t peer = 0; peer < list->size(); ++peer)
        if ((*list)[peer] != nullptr && static_cast<int>(peer) != ctx.rank)
          (*list)[peer]->sayFarewell(reason);
  }
}

// Whether a peer's reason only answers this rank's own farewell: the peer
// failed because this rank gave up. It adds nothing but where the peer
// waits in turn (chainFromEcho).
bool echoesGiveUpOf(const std::string& said, int rank, int nranks) {
  const std::string me = std::to_string(rank);
  return said.find("rank " + me + "/" + std::to_string(nranks) + " gave up") !=
             std::string::npos ||
         said.find("peer rank " + me + " gave up") != std::string::npos;
}

// From a peer's answer to this rank's farewell, "; rank P waits on: ..."
// when the peer waits on a third rank (peerReasonText), else "".
std::string chainFromEcho(const std::string& said, int rank) {
  const std::string marker =
      "peer rank " + std::to_string(rank) + " gave up" + kWaitsOn;
  const size_t at = said.find(marker);
  if (at == std::string::npos || at == 0) return "";
  const size_t who = said.rfind("rank ", at - 1);  // "rank P: peer rank ..."
  const size_t whoEnd = said.find(':', who);
  const size_t from = at + marker.size();
  const size_t to = said.find(kPeerSaid, from);
  if (who == std::string::npos || whoEnd == std::string::npos) return "";
  return "; " + said.substr(who, whoEnd - who) + " waits on: " +
         said.substr(from, to == std::string::npos ? to : to - from);
}

// Throws `timedOut`, or what the peer this rank waited on said first. When
// one rank stalls, the ranks that wait on it and the ranks that wait on
// those time out within moments of each other, and which one reaches its
// timeout first is chance: a rank that only waited on a bystander would
// name the bystander. So the rank tells its peers why it stops (it will
// stop either way), then listens a moment longer: a peer that gave up as
// well names whom it waited on, and that reason is reported instead.
[[noreturn]] void giveUp(std::span<Lane> lanes, const Error& timedOut) {
  const AlgoContext& ctx = *lanes.front().context;
  sayFarewells(lanes, "rank " + std::to_string(ctx.rank) + "/" +
                          std::to_string(ctx.nranks) +
                          " gave up: " + timedOut.what());
  const auto end = Clock::now() + std::chrono::nanoseconds(
                                      farewellGraceNs(ctx.timeout.count()));
  while (Clock::now() < end) {
    for (const Lane& lane : lanes) {
      if (lane.stepsDone()) continue;
      // Reading is how a network connection learns of a farewell (the
      // bytes themselves no longer matter), and progress how RDMA does when
      // an unread piece is already in.
      const Step& s = waitedOn(lane.steps[lane.next]);
      for (transport::Connection* link : {s.recvFrom, s.sendTo}) {
        if (link == nullptr) continue;
        link->peekRecv();
        link->progress();
      }
    }
    try {
      checkAbortAndPeers(lanes);  // throws the peer's reason
    } catch (const Error& heard) {
      const std::string said = heard.what();
      if (!echoesGiveUpOf(said, ctx.rank, ctx.nranks)) throw;
      throw error(timedOut.code(), "%s%s", timedOut.what(),
                  chainFromEcho(said, ctx.rank).c_str());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  throw timedOut;
}

// The waker all lanes share, or null when they span communicators.
transport::Waker* commonWaker(std::span<Lane> lanes) {
  transport::Waker* w = lanes.front().context->waker;
  for (const Lane& lane : lanes)
    if (lane.context->waker != w) return nullptr;
  return w;
}

// Ends the receives the lanes' steps posted into the caller's memory
// (Step::posted) when the call returns, however it returns: nothing may
// write there afterwards.
class PostedReceives {
 public:
  explicit PostedReceives(std::span<Lane> lanes) : lanes_(lanes) {}
  PostedReceives(const PostedReceives&) = delete;
  PostedReceives& operator=(const PostedReceives&) = delete;
  ~PostedReceives() {
    for (Lane& lane : lanes_)
      for (Step& s : lane.steps)
        if (s.posted) {
          s.recvFrom->withdrawRecv();
          s.posted = false;
        }
  }

 private:
  std::span<Lane> lanes_;
};

}  // namespace

void runLanes(std::span<Lane> lanes) {
  if (lanes.empty()) return;
  const PostedReceives posted(lanes);
  bool allDone = false;
  progressAll(lanes, &allDone);
  if (allDone) return;

  const AlgoContext& ctx = *lanes.front().context;
  transport::Waker* waker = commonWaker(lanes);
  const int64_t timeoutNs = ctx.timeout.count();
  // When the lanes last moved; read from the clock only once they stall
  // (a small collective often finishes before: reading the clock costs
  // more than a poll).
  Clock::time_point idleSince{};
  bool idleKnown = false;
  uint32_t spins = 0;
  int64_t lastCheckNs = 0;
  while (true) {
    if (progressAll(lanes, &allDone)) {
      if (allDone) return;
      idleKnown = false;
      spins = 0;
      continue;
    }
    if (allDone) return;
    ++spins;
    // Look at the clock every 64 spins.
    if (spins % 64 != 0) {
      platform::cpuRelax();
      continue;
    }
    if (!idleKnown) {
      idleSince = Clock::now();
      idleKnown = true;
      lastCheckNs = 0;
    }
    int64_t idleNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         Clock::now() - idleSince)
                         .count();
    if (idleNs < ctx.wait.spinNs) {
      // A peer that shares our core (more ranks than free cores, or a busy
      // machine) only runs when we let it: a yield now and then saves a
      // whole spin budget per message when somebody wants the core. Not
      // every look at the clock: a yield is a system call, and the peer's
      // bytes that land during it wait for it to return.
      // Where ranks outnumber cores (a short spin budget says so), a peer
      // surely waits for the core: yield at every look.
      if (ctx.wait.crowded() || spins % kSpinsPerYield == 0)
        platform::yieldCpu();
      continue;
    }
    if (idleNs - lastCheckNs >= kPeerCheckIntervalNs || idleNs < lastCheckNs) {
      checkAbortAndPeers(lanes);  // a few system calls: not every spin
      tendConnections(lanes);
      lastCheckNs = idleNs;
    }
    if (idleNs >= timeoutNs) {
      const Lane& stuck = firstStuck(lanes);
      giveUp(lanes, error(mclTimeout,
                          "rank %d: %s: no progress for %.3g s (the "
                          "timeout, MCL_TIMEOUT)",
                          stuck.context->rank, describeWait(stuck).c_str(),
                          static_cast<double>(timeoutNs) / 1e9));
    }
    if (idleNs < ctx.wait.spinNs + ctx.wait.yieldNs) {
      platform::yieldCpu();
      continue;
    }
    if (waker == nullptr) {
      // Lanes of several communicators have no one doorbell to sleep on:
      // nap briefly instead of burning the core for the whole timeout.
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      continue;
    }
    uint32_t token = waker->arm();
    if (progressAll(lanes, &allDone)) {
      waker->disarm();
      if (allDone) return;
      idleKnown = false;
      spins = 0;
      continue;
    }
    waker->sleep(token, std::min(kSleepSliceNs, timeoutNs - idleNs));
    waker->disarm();
  }
}

}  // namespace mcl
