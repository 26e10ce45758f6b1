#include "platform/system_error.h"

#include <cerrno>
#include <string>
#include <system_error>

namespace mcl::platform {

void throwSystemError(const std::string& what) {
  throwSystemError(what, errno);
}

void throwSystemError(const std::string& what, int err) {
  throw std::system_error(err, std::generic_category(), what);
}

}  // namespace mcl::platform
