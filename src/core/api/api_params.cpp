// The API of the parameter registry (core/params/params.h): what `mcl-perf
// params` lists.
#include "core/api/api_guard.h"

#include <cstddef>
#include "core/params/params.h"

using mcl::apiCall;
using mcl::error;

extern "C" {

mclResult_t mclGetParam(int index, const char** name, const char** defaultValue,
                        const char** doc) {
  return apiCall(__func__, [&] {
    if (name == nullptr) throw error(mclInvalidArgument, "name is NULL");
    if (defaultValue == nullptr)
      throw error(mclInvalidArgument, "defaultValue is NULL");
    if (doc == nullptr) throw error(mclInvalidArgument, "doc is NULL");
    if (index < 0)
      throw error(mclInvalidArgument, "index %d is negative", index);
    const auto params = mcl::allParams();
    const bool past = static_cast<size_t>(index) >= params.size();
    *name = past ? nullptr : params[static_cast<size_t>(index)].name;
    *defaultValue =
        past ? nullptr : params[static_cast<size_t>(index)].defaultValue;
    *doc = past ? nullptr : params[static_cast<size_t>(index)].doc;
  });
}

}  // extern "C"
