// Inside mcl, failures are typed exceptions; the C boundary (api_guard.h)
// turns them into result codes and keeps the message for mclGetLastError.
#pragma once

#include <mcl/mcl.h>

#include <exception>
#include <stdexcept>
#include <string>

namespace mcl {

class Error : public std::runtime_error {
 public:
  Error(mclResult_t code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  mclResult_t code() const { return code_; }

 private:
  mclResult_t code_;
};

// Builds an Error with printf-style text; use as `throw error(code, ...)`.
Error error(mclResult_t code, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

// Any exception as an Error: the OS's (std::system_error) as
// mclSystemError, socket timeouts as mclTimeout, closed connections as
// mclRemoteError, out of memory as mclSystemError, the rest as
// mclInternalError.
Error asError(std::exception_ptr e);

// Text of a result code, from the X-macro in mcl.h.
const char* resultName(mclResult_t code);

// The calling thread's last error message (what mclGetLastError returns).
void setLastError(const std::string& message);
const char* lastError();

}  // namespace mcl
