// How to write into a ring slot the peer core reads next: plain stores or
// non-temporal ones. Which is faster depends on where the two cores sit,
// and a VM's cores move. Near each other (one cache), plain stores leave
// the data where the peer finds it at once: non-temporal ones cost 1.5x.
// Far apart (another die), every plain store first takes the line back
// from the peer's cache (it read that slot last time round): the copy
// into the ring takes 3x as long, and non-temporal stores, which skip that,
// halve the whole transfer. So the producer times its copies, keeps the
// recent cost of each kind, uses the cheaper and tries the other now and
// then.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace mcl::transport::shm {

enum class RingStores { Auto, Plain, Streaming };
// MCL_SHM_RING_STORES's values: "auto", "plain", "stream"; anything else
// is mclInvalidArgument.
RingStores ringStoresNamed(const std::string& name);

class StoreChoice {
 public:
  explicit StoreChoice(RingStores mode = RingStores::Auto) : mode_(mode) {}

  // Whether a write of `bytes` is chosen (and timed): small pieces are
  // latency, and non-temporal stores would send them to memory. Only
  // x86-64 builds have a non-temporal copy (elsewhere it is memcpy): there
  // auto never chooses.
  bool chooses(size_t bytes) const {
    return bytes >= kMinBytes && mode_ != RingStores::Plain &&
           (kHaveStreamingStores || mode_ == RingStores::Streaming);
  }
  // true: write the next piece with non-temporal stores.
  bool streamNext();
  // What the write cost.
  void record(bool streamed, size_t bytes, std::chrono::nanoseconds took);

  static constexpr size_t kMinBytes = 16 * 1024;
#if defined(__x86_64__)
  static constexpr bool kHaveStreamingStores = true;
#else
  static constexpr bool kHaveStreamingStores = false;
#endif

 private:
  RingStores mode_;
  // Recent cost of each kind (0: plain, 1: streaming) in ns per KiB;
  // negative until measured.
  double nsPerKiB_[2] = {-1.0, -1.0};
  // Writes of each kind seen: the first pays for warming up (page faults
  // on fresh ring pages) and is not counted.
  uint32_t seen_[2] = {0, 0};
  uint32_t writes_ = 0;
};

}  // namespace mcl::transport::shm
