// Streams: create, synchronize, query, destroy.
#include "core/api_guard.h"
#include "core/handle_registry.h"
#include "core/stream.h"

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
    auto* s = new mclStream();
    mcl::registerStream(s);
    *stream = s;
  });
}

mclResult_t mclStreamSynchronize(mclStream_t stream) {
  return apiCall(__func__, [&] {
    if (stream == nullptr) return;  // the NULL stream is always complete
    mcl::checkStream(stream);
    std::string message;
    raiseIfFailed(stream->synchronize(&message), message);
  });
}

mclResult_t mclStreamQuery(mclStream_t stream) {
  mclResult_t state = mclSuccess;
  mclResult_t result = apiCall(__func__, [&] {
    if (stream == nullptr) return;
    mcl::checkStream(stream);
    std::string message;
    state = stream->query(&message);
    raiseIfFailed(state, message);
  });
  return result != mclSuccess ? result : state;
}

mclResult_t mclStreamDestroy(mclStream_t stream) {
  return apiCall(__func__, [&] {
    if (stream == nullptr) throw error(mclInvalidArgument, "stream is NULL");
    if (!mcl::unregisterStream(stream))
      throw error(mclInvalidArgument,
                  "stream %p is not a live stream (destroyed or never "
                  "created)",
                  static_cast<void*>(stream));
    delete stream;  // drains its queue first
  });
}

}  // extern "C"
