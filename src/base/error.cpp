#include "base/error.h"

#include <cstdarg>
#include <cstdio>
#include <exception>
#include <new>
#include <system_error>

#include "platform/socket.h"

namespace mcl {

Error error(mclResult_t code, const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  return Error(code, buf);
}

Error asError(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const Error& x) {
    return x;
  } catch (const platform::TimeoutError& x) {
    return Error(mclTimeout, x.what());
  } catch (const platform::ConnectionClosed& x) {
    return Error(mclRemoteError, x.what());
  } catch (const std::system_error& x) {
    return Error(mclSystemError, x.what());
  } catch (const std::bad_alloc&) {
    return Error(mclSystemError, "out of memory");
  } catch (const std::exception& x) {
    return Error(mclInternalError, x.what());
  } catch (...) {
    return Error(mclInternalError, "unknown exception");
  }
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
