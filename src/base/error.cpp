#include "base/error.h"

#include <cstdarg>
#include <cstdio>

namespace mcl {

Error error(mclResult_t code, const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  return Error(code, buf);
}

const char* resultName(mclResult_t code) {
  switch (code) {
#define MCL_RESULT_CASE_(name, value, text) \
  case mcl##name:                           \
    return text;
    MCL_RESULT_MAP(MCL_RESULT_CASE_)
#undef MCL_RESULT_CASE_
    default:
      return "unknown result code";
  }
}

namespace {
thread_local std::string tlsLastError;
}

void setLastError(const std::string& message) { tlsLastError = message; }
const char* lastError() { return tlsLastError.c_str(); }

}  // namespace mcl
