// The running operating system's version, read at run time: Apple's verbs
// provider carries frames over 4 KiB only from macOS 26.3, whatever SDK mcl
// was built with, so the check must ask the machine it runs on.
#pragma once

#include <optional>
#include <string>

namespace mcl::platform {

struct OsVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  bool atLeast(int wantMajor, int wantMinor) const {
    return major > wantMajor || (major == wantMajor && minor >= wantMinor);
  }
  std::string text() const;  // "26.2" or "26.2.1"
};

// "26.2", "26.3.1": nullopt for anything else.
std::optional<OsVersion> parseOsVersion(const std::string& text);

// macOS's product version (kern.osproductversion); nullopt on other
// systems or when the kernel does not say.
std::optional<OsVersion> macosVersion();

}  // namespace mcl::platform
