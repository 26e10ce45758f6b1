// CPU facts and the spin-loop hint: the few things the adaptive wait needs.
#pragma once

namespace mcl::platform {

// Tells the core we are spinning, so a sibling hyper-thread or the VM host
// can use the cycles.
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Logical CPUs currently online (at least 1).
int onlineCpuCount();

// Gives the CPU to another runnable thread.
void yieldCpu();

}  // namespace mcl::platform
