#include "platform/system_error.h"

#include <cerrno>
#include <string>
#include <system_error>
#include <utility>

#include "platform/process_limits.h"

namespace mcl::platform {

void throwSystemError(const std::string& what) {
  throwSystemError(what, errno);
}

namespace {

// A std::system_error whose text ends with a hint after the OS's reason:
// "socket: Too many open files; this process has all 1024 descriptors...".
class HintedSystemError final : public std::system_error {
 public:
  HintedSystemError(int err, const std::string& what, std::string hint)
      : std::system_error(err, std::generic_category(), what),
        text_(std::system_error::what() + hint) {}
  const char* what() const noexcept override { return text_.c_str(); }

 private:
  std::string text_;
};

}  // namespace

void throwSystemError(const std::string& what, int err) {
  // A limit that ran out says which, and how to raise it.
  std::string hint = limitHint(err);
  if (hint.empty()) throw std::system_error(err, std::generic_category(), what);
  throw HintedSystemError(err, what, std::move(hint));
}

}  // namespace mcl::platform
