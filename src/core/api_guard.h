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

}  // namespace mcl
