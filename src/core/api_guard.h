// The C boundary: every exported function runs its body through apiCall,
// which turns exceptions into result codes and keeps the message for
// mclGetLastError. Nothing throws across the C API.
#pragma once

#include <mcl/mcl.h>

#include <new>
#include <system_error>

#include "base/error.h"
#include "base/log.h"
#include "platform/socket.h"

namespace mcl {

mclResult_t reportError(mclResult_t code, const char* function,
                        const char* message);

template <class Body>
mclResult_t apiCall(const char* function, Body&& body) noexcept {
  try {
    body();
    return mclSuccess;
  } catch (const Error& e) {
    return reportError(e.code(), function, e.what());
  } catch (const platform::TimeoutError& e) {
    return reportError(mclTimeout, function, e.what());
  } catch (const platform::ConnectionClosed& e) {
    return reportError(mclRemoteError, function, e.what());
  } catch (const std::system_error& e) {
    return reportError(mclSystemError, function, e.what());
  } catch (const std::bad_alloc&) {
    return reportError(mclSystemError, function, "out of memory");
  } catch (const std::exception& e) {
    return reportError(mclInternalError, function, e.what());
  } catch (...) {
    return reportError(mclInternalError, function, "unknown exception");
  }
}

}  // namespace mcl
