// The platform layer reports OS failures as std::system_error carrying errno;
// the core turns them into mclSystemError with the message.
#pragma once

#include <string>

namespace mcl::platform {

// Throws std::system_error(errno, what + ": " + strerror).
[[noreturn]] void throwSystemError(const std::string& what);
[[noreturn]] void throwSystemError(const std::string& what, int err);

}  // namespace mcl::platform
