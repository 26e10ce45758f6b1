#include "bench/memory_report.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/mcl_error.h"
#include "common/text_format.h"

namespace mcl::perf {

namespace {

std::string mib(uint64_t bytes) {
  if (bytes < 1024)
    return formatText("%llu B", static_cast<unsigned long long>(bytes));
  if (bytes < (1 << 20))
    return formatText("%.1f KiB", static_cast<double>(bytes) / 1024);
  return formatText("%.1f MiB", static_cast<double>(bytes) / (1 << 20));
}

// Rank 0's zero-copy figures, when it ran any call in place or registered
// memory: peers' mclMemAlloc memory it maps is not its own footprint.
std::string zeroCopyPart(const nlohmann::json& memory) {
  const uint64_t calls = memory.value("zero_copy_calls", uint64_t{0});
  const uint64_t registrations = memory.value("registrations", uint64_t{0});
  if (calls == 0 && registrations == 0) return "";
  return formatText("; %llu calls in place on mclMemAlloc memory, ",
                    static_cast<unsigned long long>(calls)) +
         mib(memory.value("peer_mapped_bytes", uint64_t{0})) +
         " of peers' mapped";
}

}  // namespace

int64_t peakResidentBytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
#if defined(__APPLE__)
  return usage.ru_maxrss;  // bytes on macOS
#else
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // KiB on Linux
#endif
}

int64_t largestPeakResidentBytes(mclComm_t comm, int rank) {
  int64_t peak = peakResidentBytes();
  checkMcl(rank, "mclAllReduce",
           mclAllReduce(&peak, &peak, 1, mclInt64, mclMax, comm, nullptr),
           comm);
  return peak;
}

std::string memoryLine(const nlohmann::json& memory, int64_t peakRss) {
  const auto bytes = [&](const char* key) {
    return memory.value(key, uint64_t{0});
  };
  const nlohmann::json perPeer =
      memory.value("per_peer_bytes", nlohmann::json::object());
  uint64_t most = 0;
  for (const char* t : {"shm", "tcp", "rdma"})
    most = std::max(most, perPeer.value(t, uint64_t{0}));
  return "# mcl buffers: " +
         mib(bytes("shm_bytes") + bytes("tcp_bytes") + bytes("rdma_bytes")) +
         " (shm " + mib(bytes("shm_bytes")) + ", tcp " +
         mib(bytes("tcp_bytes")) + ", rdma " + mib(bytes("rdma_bytes")) +
         "; at most " + mib(most) + " per peer and transport, limit " +
         mib(bytes("per_peer_limit_bytes")) + "; staging peak " +
         mib(bytes("staging_peak_bytes")) + zeroCopyPart(memory) +
         "); peak resident memory " + mib(static_cast<uint64_t>(peakRss)) +
         " (the largest rank)";
}

}  // namespace mcl::perf
