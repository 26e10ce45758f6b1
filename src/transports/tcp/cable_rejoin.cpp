#include "transports/tcp/cable_rejoin.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/log.h"

namespace mcl::transport::tcp {

namespace {

// A link back up this long is tried (a cable pushed in sits still, one
// that flaps does not); a failed try is made again this much later.
constexpr int64_t kSettleNs = 1'000'000'000;
constexpr int64_t kRetryNs = 2'000'000'000;
constexpr auto kLookEvery = std::chrono::milliseconds(100);
constexpr auto kAttempt = std::chrono::seconds(2);

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

CableRejoin::CableRejoin(int rank, Connect connect, Take take)
    : rank_(rank), connect_(std::move(connect)), take_(std::move(take)) {
  thread_ = std::thread([this] { run(); });
}

CableRejoin::~CableRejoin() {
  {
    std::lock_guard<std::mutex> lock(wakeMutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

uint64_t CableRejoin::add(TcpConnection* connection, Target target) {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t stripes = target.links.size() * target.socketsPerLink;
  const uint64_t id = nextId_++;
  entries_[id] =
      Entry{connection, std::move(target), std::vector<int64_t>(stripes, 0),
            std::vector<int64_t>(stripes, 0), std::vector<char>(stripes, 0)};
  return id;
}

void CableRejoin::forget(uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.erase(id);
}

void CableRejoin::run() {
  std::unique_lock<std::mutex> lock(wakeMutex_);
  while (!wake_.wait_for(lock, kLookEvery, [this] { return stop_; })) {
    lock.unlock();
    look(nowNs());
    lock.lock();
  }
}

void CableRejoin::look(int64_t now) {
  // What to do, decided under the lock; the sockets made without it (a
  // connection may go meanwhile: its offer is dropped then).
  struct Work {
    uint64_t id;
    size_t stripe;
    int peer;
    Link link;
    StreamKey key;
    bool connects;
  };
  std::vector<Work> work;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [id, e] : entries_) {
      const uint64_t givenUp = e.connection->givenUpStripes();
      // A socket taken in since the last look: a new episode for every
      // stripe (it may have been given up again meanwhile).
      if (e.connection->socketsRegained() != e.takenIn) {
        e.takenIn = e.connection->socketsRegained();
        std::fill(e.made.begin(), e.made.end(), 0);
      }
      for (size_t i = 0; i < e.upSinceNs.size(); ++i) {
        const size_t l = i / e.target.socketsPerLink;
        const bool up = !e.target.linkDown[l]->load();
        if (((givenUp >> i) & 1) == 0) e.made[i] = 0;  // taken: a new episode
        if (((givenUp >> i) & 1) == 0 || !up || e.made[i] != 0) {
          e.upSinceNs[i] = 0;
          continue;
        }
        if (e.upSinceNs[i] == 0) e.upSinceNs[i] = now;
        const bool connects = rank_ > e.target.peer;
        const StreamKey key{connects ? rank_ : e.target.peer, e.target.channel,
                            kRejoinLinkBase + static_cast<uint32_t>(l),
                            static_cast<uint32_t>(i % e.target.socketsPerLink)};
        if (!connects) {
          work.push_back({id, i, e.target.peer, e.target.links[l], key, false});
          continue;
        }
        if (now - e.upSinceNs[i] < kSettleNs || now - e.triedNs[i] < kRetryNs)
          continue;
        e.triedNs[i] = now;
        work.push_back({id, i, e.target.peer, e.target.links[l], key, true});
      }
    }
  }
  for (Work& w : work) {
    std::optional<ProvenSocket> socket;
    try {
      if (w.connects)
        socket =
            connect_(w.peer, w.link, w.key, platform::Clock::now() + kAttempt);
      else
        socket = take_(w.key);
    } catch (const std::exception& e) {
      // The cable is not back after all (or not yet at the far end): the
      // next try is in kRetryNs.
      MCL_LOG(Info, kLogInit,
              "rank %d: a new connection to rank %d over a cable that came "
              "back failed (tried again in 2 s): %s",
              rank_, w.peer, e.what());
    }
    if (socket) offer(w.id, w.stripe, std::move(*socket), w.connects);
  }
}

void CableRejoin::offer(uint64_t id, size_t stripe, ProvenSocket socket,
                        bool made) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  if (made) it->second.made[stripe] = 1;
  it->second.connection->offerSocket(stripe, std::move(socket));
}

}  // namespace mcl::transport::tcp
