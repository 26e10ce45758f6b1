// The limits a process meets first on a busy or locked-down host: open
// descriptors (ulimit -n) and locked memory (ulimit -l, what RDMA
// registration pins), with the hints messages give when one runs out.
#pragma once

#include <cstdint>
#include <string>

namespace mcl::platform {

struct ResourceLimit {
  bool unlimited = false;
  uint64_t soft = 0;  // what the process may use now
  uint64_t hard = 0;  // how far it may raise soft itself
};
ResourceLimit descriptorLimit();    // RLIMIT_NOFILE
ResourceLimit lockedMemoryLimit();  // RLIMIT_MEMLOCK, in bytes

// Descriptors this process has open, or -1 when it cannot tell.
int openDescriptorCount();

// What to add to a system call's message when err is a limit that ran
// out (EMFILE, ENFILE, ENOMEM): which one, its value and how to raise it;
// "" for other errors.
std::string limitHint(int err);

}  // namespace mcl::platform
