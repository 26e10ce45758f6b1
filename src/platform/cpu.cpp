#include "platform/cpu.h"

#include <sched.h>
#include <unistd.h>

namespace mcl::platform {

int onlineCpuCount() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

void yieldCpu() { sched_yield(); }

}  // namespace mcl::platform
