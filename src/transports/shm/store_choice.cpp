#include "transports/shm/store_choice.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"

namespace mcl::transport::shm {
namespace {

// One write in this many goes the other way, to notice when the cores
// move: the cost is a few percent at worst (the slower kind is 1.5-3x).
constexpr uint32_t kExploreEvery = 32;
// Weight of the newest measurement: a handful of pieces decide.
constexpr double kWeight = 0.25;
// Streamed pieces cost the consumer too (it reads them from memory, not
// from a shared cache), which the producer's clock does not see: they
// win only when they at least halve the producer's cost. Far apart they
// cut it to about 0.3; near, a fold into the slot measures 0.8-1 and a
// copy 1.5, and streaming those slowed a 64 MiB all-reduce by 5-8%.
constexpr double kStreamingAdvantage = 0.5;

}  // namespace

RingStores ringStoresNamed(const std::string& name) {
  if (name == "auto") return RingStores::Auto;
  if (name == "plain") return RingStores::Plain;
  if (name == "stream") return RingStores::Streaming;
  throw error(mclInvalidArgument,
              "MCL_SHM_RING_STORES='%s' is unknown; use auto, plain or stream",
              name.c_str());
}

bool StoreChoice::streamNext() {
  if (mode_ == RingStores::Streaming) return true;
  if (nsPerKiB_[0] < 0) return false;
  if (nsPerKiB_[1] < 0) return true;
  const bool preferStreaming =
      nsPerKiB_[1] < kStreamingAdvantage * nsPerKiB_[0];
  return ++writes_ % kExploreEvery == 0 ? !preferStreaming : preferStreaming;
}

void StoreChoice::record(bool streamed, size_t bytes,
                         std::chrono::nanoseconds took) {
  const int kind = streamed ? 1 : 0;
  if (seen_[kind]++ == 0 || bytes == 0) return;
  // At least 1 ns per KiB: a clock that did not tick must not become an
  // estimate nothing can beat.
  double cost = std::max(1.0, double(took.count()) * 1024.0 / double(bytes));
  double& recent = nsPerKiB_[kind];
  if (recent < 0) {
    recent = cost;
    return;
  }
  // A write the scheduler cut in two says nothing about stores: one such
  // outlier moves the estimate at most as much as a 2x slower write (a
  // real change, 3x when the cores move apart, shows in a few writes).
  if (cost > 2 * recent) cost = 2 * recent;
  recent += kWeight * (cost - recent);
}

}  // namespace mcl::transport::shm
