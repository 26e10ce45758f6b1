#include "plan/host_resources.h"

#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#if defined(__APPLE__)
#include <mach/mach.h>
#include <sys/sysctl.h>
#endif

namespace mcl::perf::plan {

namespace {

#if defined(__APPLE__)
std::string sysctlText(const char* name) {
  std::array<char, 256> text{};
  size_t size = text.size();
  if (sysctlbyname(name, text.data(), &size, nullptr, 0) != 0) return "";
  return std::string(text.data(), strnlen(text.data(), text.size()));
}

void readMemory(HostResources* r) {
  uint64_t bytes = 0;
  size_t size = sizeof bytes;
  if (sysctlbyname("hw.memsize", &bytes, &size, nullptr, 0) == 0)
    r->memoryBytes = static_cast<double>(bytes);
  // Free, inactive and purgeable pages are what a process can take.
  vm_statistics64_data_t vm{};
  mach_msg_type_number_t count = HOST_VM_INFO64_COUNT;
  if (host_statistics64(mach_host_self(), HOST_VM_INFO64,
                        reinterpret_cast<host_info64_t>(&vm),
                        &count) == KERN_SUCCESS) {
    const double page = static_cast<double>(vm_kernel_page_size);
    r->freeBytes = page * (double(vm.free_count) + double(vm.inactive_count) +
                           double(vm.purgeable_count));
  }
  r->chip = sysctlText("machdep.cpu.brand_string");
  int cores = 0;
  size = sizeof cores;
  if (sysctlbyname("hw.physicalcpu", &cores, &size, nullptr, 0) == 0)
    r->cores = cores;
}
#else
// /proc/meminfo: MemTotal and MemAvailable, in KiB.
void readMemory(HostResources* r) {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    double kib = 0;
    fields >> key >> kib;
    if (key == "MemTotal:") r->memoryBytes = kib * 1024;
    if (key == "MemAvailable:") r->freeBytes = kib * 1024;
  }
  r->cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
}
#endif

struct QuotedChip {
  const char* name;
  int mostCores;  // the binned chip: this many CPU cores or fewer (0: any)
  double gbPerS;
};

// Apple's published figures: the chips with Thunderbolt 5. The binned M4
// Max (14 CPU cores) has 410 GB/s, the full one (16) 546.
constexpr QuotedChip kChips[] = {
    {"M3 Ultra", 0, 819}, {"M4 Max", 14, 410}, {"M4 Max", 0, 546},
    {"M4 Pro", 0, 273},   {"M5 Max", 0, 614},  {"M5 Pro", 0, 307},
};

}  // namespace

HostResources readHostResources() {
  HostResources r;
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) == 0) r.host = name.data();
  readMemory(&r);
  return r;
}

double quotedMemoryBandwidth(const std::string& chip, int cores) {
  for (const QuotedChip& c : kChips)
    if (chip.find(c.name) != std::string::npos &&
        (c.mostCores == 0 || (cores > 0 && cores <= c.mostCores)))
      return c.gbPerS * 1e9;
  return 0;
}

}  // namespace mcl::perf::plan
