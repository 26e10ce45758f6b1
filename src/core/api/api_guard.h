// The C boundary: every exported function runs its body through apiCall,
// which turns exceptions into result codes and keeps the message for
// mclGetLastError. Nothing throws across the C API.
#pragma once

#include <mcl/mcl.h>
#include <exception>

#include "base/error.h"

namespace mcl {

mclResult_t reportError(mclResult_t code, const char* function,
                        const char* message);

template <class Body>
mclResult_t apiCall(const char* function, Body&& body) noexcept {
  try {
    body();
    return mclSuccess;
  } catch (...) {
    try {
      Error e = asError(std::current_exception());
      return reportError(e.code(), function, e.what());
    } catch (...) {
      return mclInternalError;  // out of memory while reporting
    }
  }
}

// As apiCall, for a body that returns mclSuccess or mclInProgress (a
// non-blocking call still under way: not an error, nothing is logged).
template <class Body>
mclResult_t apiCallStatus(const char* function, Body&& body) noexcept {
  mclResult_t status = mclSuccess;
  mclResult_t result = apiCall(function, [&] { status = body(); });
  return result != mclSuccess ? result : status;
}

}  // namespace mcl
