// Streams: create, synchronize, query, destroy.
#include "core/api/api_guard.h"

#include <string>
#include "core/comm/handle_registry.h"
#include "core/run/stream.h"

using mcl::apiCall;
using mcl::error;

namespace {

void raiseIfFailed(mclResult_t code, const std::string& message) {
  if (code != mclSuccess && code != mclInProgress)
    throw mcl::Error(code, "an operation on the stream failed: " + message);
}

}  // namespace

extern "C" {

mclResult_t mclStreamCreate(mclStream_t* stream) {
  return apiCall(__func__, [&] {
    if (stream == nullptr) throw error(mclInvalidArgument, "stream is NULL");
    *stream = mcl::registerStream(new mclStream());
  });
}

mclResult_t mclStreamSynchronize(mclStream_t stream) {
  return apiCall(__func__, [&] {
    mclStream* s = mcl::resolveStream(stream);
    if (s == nullptr) return;  // the NULL stream is always complete
    std::string message;
    raiseIfFailed(s->synchronize(&message), message);
  });
}

mclResult_t mclStreamQuery(mclStream_t stream) {
  mclResult_t state = mclSuccess;
  mclResult_t result = apiCall(__func__, [&] {
    mclStream* s = mcl::resolveStream(stream);
    if (s == nullptr) return;
    std::string message;
    state = s->query(&message);
    raiseIfFailed(state, message);
  });
  return result != mclSuccess ? result : state;
}

mclResult_t mclStreamDestroy(mclStream_t stream) {
  return apiCall(__func__, [&] {
    if (stream == nullptr) throw error(mclInvalidArgument, "stream is NULL");
    mclStream* s = mcl::unregisterStream(stream);
    if (s == nullptr)
      throw error(mclInvalidArgument,
                  "stream %p is not a live stream (destroyed or never "
                  "created)",
                  static_cast<void*>(stream));
    delete s;  // drains its queue first
  });
}

}  // extern "C"
