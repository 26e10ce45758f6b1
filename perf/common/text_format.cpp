#include "common/text_format.h"

#include <cstdarg>
#include <cstdio>
#include <string>

namespace mcl::perf {

std::string formatText(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

}  // namespace mcl::perf
