// What one Mac can do on its own, for `qualify`: copy memory and fold two
// float32 buffers into one, each on one core, past the caches. mcl's
// collectives need both to outrun the cables; a Mac that cannot (thermal
// throttling, a busy machine, a low-power mode) limits the whole cluster.
#pragma once

namespace mcl::perf {

struct MacSpeed {
  double memcpyGBps = 0;  // bytes copied per second (1e9)
  double reduceGBps = 0;  // float32 sum: bytes of result per second (1e9)
};

// Best of a few passes over 64 MiB buffers.
MacSpeed measureMacSpeed();

}  // namespace mcl::perf
