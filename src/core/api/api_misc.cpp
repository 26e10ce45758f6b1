// Version, error strings, unique ids.
#include <cstring>
#include <string>

#include "base/log.h"
#include "core/api/api_guard.h"
#include "core/bootstrap/new_unique_id.h"
#include "core/bootstrap/unique_id.h"
#include "core/run/group.h"

namespace mcl {

mclResult_t reportError(mclResult_t code, const char* function,
                        const char* message) {
  std::string text = std::string(function) + ": " + message;
  setLastError(text);
  if (code == mclInvalidArgument) {
    MCL_LOG(Info, kLogInit, "%s", text.c_str());
  } else {
    MCL_LOG(Warn, kLogInit, "%s", text.c_str());
  }
  return code;
}

}  // namespace mcl

using mcl::apiCall;
using mcl::error;

extern "C" {

mclResult_t mclGetVersion(int* version) {
  return apiCall(__func__, [&] {
    if (version == nullptr) throw error(mclInvalidArgument, "version is NULL");
    *version = MCL_VERSION_CODE;
  });
}

const char* mclGetErrorString(mclResult_t result) {
  return mcl::resultName(result);
}

const char* mclGetLastError(mclComm_t) { return mcl::lastError(); }

mclResult_t mclGetUniqueId(mclUniqueId* uniqueId) {
  return apiCall(__func__, [&] {
    if (uniqueId == nullptr)
      throw error(mclInvalidArgument, "uniqueId is NULL");
    *uniqueId = mcl::newUniqueId();
  });
}

mclResult_t mclUniqueIdToString(const mclUniqueId* uniqueId, char* buf,
                                size_t bufSize) {
  return apiCall(__func__, [&] {
    if (uniqueId == nullptr)
      throw error(mclInvalidArgument, "uniqueId is NULL");
    if (buf == nullptr) throw error(mclInvalidArgument, "buf is NULL");
    std::string text = mcl::uniqueIdToString(mcl::decodeUniqueId(*uniqueId));
    if (bufSize < text.size() + 1)
      throw error(mclInvalidArgument,
                  "bufSize %zu is too small: the id needs %zu bytes (use "
                  "MCL_UNIQUE_ID_STRING_BYTES)",
                  bufSize, text.size() + 1);
    memcpy(buf, text.c_str(), text.size() + 1);
  });
}

mclResult_t mclUniqueIdFromString(const char* str, mclUniqueId* uniqueId) {
  return apiCall(__func__, [&] {
    if (str == nullptr) throw error(mclInvalidArgument, "str is NULL");
    if (uniqueId == nullptr)
      throw error(mclInvalidArgument, "uniqueId is NULL");
    if (strnlen(str, MCL_UNIQUE_ID_STRING_BYTES) >= MCL_UNIQUE_ID_STRING_BYTES)
      throw error(mclInvalidArgument, "str is longer than a unique id string");
    *uniqueId = mcl::encodeUniqueId(mcl::uniqueIdFromString(str));
  });
}

mclResult_t mclGroupStart(void) {
  return apiCall(__func__, [] { mcl::groupStart(); });
}

mclResult_t mclGroupEnd(void) {
  return mcl::apiCallStatus(__func__, [] { return mcl::groupEnd(); });
}

}  // extern "C"
