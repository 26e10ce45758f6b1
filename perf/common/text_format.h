// printf into a std::string, checked by the compiler like printf.
#pragma once

#include <string>

namespace mcl::perf {

std::string formatText(const char* fmt, ...)
    __attribute__((format(printf, 1, 2)));

}  // namespace mcl::perf
