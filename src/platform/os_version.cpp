#include "platform/os_version.h"

#include <cstddef>
#include <optional>
#include <string>

#ifdef __APPLE__
#include <sys/sysctl.h>
#include <sys/types.h>
#endif

namespace mcl::platform {

std::string OsVersion::text() const {
  std::string s = std::to_string(major) + "." + std::to_string(minor);
  if (patch != 0) s += "." + std::to_string(patch);
  return s;
}

std::optional<OsVersion> parseOsVersion(const std::string& text) {
  int parts[3] = {0, 0, 0};
  int count = 0;
  size_t i = 0;
  while (count < 3) {
    size_t start = i;
    long value = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && i - start < 6)
      value = value * 10 + (text[i++] - '0');
    if (i == start) return std::nullopt;  // no digits where a part belongs
    parts[count++] = static_cast<int>(value);
    if (i == text.size()) break;
    if (text[i] != '.') return std::nullopt;
    ++i;
  }
  if (i != text.size() || count < 2) return std::nullopt;
  return OsVersion{parts[0], parts[1], parts[2]};
}

std::optional<OsVersion> macosVersion() {
#ifdef __APPLE__
  char buf[32] = {};
  size_t size = sizeof(buf) - 1;
  if (sysctlbyname("kern.osproductversion", buf, &size, nullptr, 0) != 0)
    return std::nullopt;
  return parseOsVersion(
      std::string(buf, size > 0 && buf[size - 1] == '\0' ? size - 1 : size));
#else
  return std::nullopt;
#endif
}

}  // namespace mcl::platform
