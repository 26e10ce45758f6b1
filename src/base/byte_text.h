// Byte counts as people read them in messages: "64.0 MiB", "512 B".
#pragma once

#include <cstdint>
#include <string>

namespace mcl {

// Powers of 1024 (what df -h and Docker's --shm-size mean), one decimal
// from KiB up.
std::string bytesText(uint64_t bytes);

}  // namespace mcl
