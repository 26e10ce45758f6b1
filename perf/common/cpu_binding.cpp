#include "common/cpu_binding.h"

#if defined(__linux__)
#include <sched.h>
#endif

#include <cstddef>
#include <vector>

namespace mcl::perf {

int bindToCore(int rank) {
#if defined(__linux__)
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return -1;
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  if (cpus.empty()) return -1;
  int cpu = cpus[static_cast<size_t>(rank) % cpus.size()];
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return sched_setaffinity(0, sizeof(one), &one) == 0 ? cpu : -1;
#else
  (void)rank;
  return -1;
#endif
}

}  // namespace mcl::perf
