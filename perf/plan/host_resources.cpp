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
}
#endif

struct QuotedChip {
  const char* name;
  double gbPerS;
};

// Apple's published figures (shared/facts/thunderbolt-rdma.md): the chips
// with Thunderbolt 5. Longer names first: "M4 Max" before "M4".
constexpr QuotedChip kChips[] = {
    {"M3 Ultra", 819}, {"M4 Max", 546}, {"M4 Pro", 273},
    {"M5 Max", 614},   {"M5 Pro", 307},
};

}  // namespace

HostResources readHostResources() {
  HostResources r;
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) == 0) r.host = name.data();
  readMemory(&r);
  return r;
}

double quotedMemoryBandwidth(const std::string& chip) {
  for (const QuotedChip& c : kChips)
    if (chip.find(c.name) != std::string::npos) return c.gbPerS * 1e9;
  return 0;
}

}  // namespace mcl::perf::plan
