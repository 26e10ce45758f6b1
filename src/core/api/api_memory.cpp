// mclMemAlloc / mclMemFree and mclCommRegister / mclCommDeregister.
#include "core/api/api_guard.h"

#include <cstddef>
#include "core/comm/handle_registry.h"
#include "core/comm/shared_allocations.h"

extern "C" {

mclResult_t mclMemAlloc(void** ptr, size_t size) {
  return mcl::apiCall(__func__, [&] {
    if (ptr == nullptr) throw mcl::error(mclInvalidArgument, "ptr is NULL");
    *ptr = mcl::allocateShared(size);
  });
}

mclResult_t mclMemFree(void* ptr) {
  return mcl::apiCall(__func__, [&] {
    if (ptr == nullptr) throw mcl::error(mclInvalidArgument, "ptr is NULL");
    mcl::freeShared(ptr);
  });
}

mclResult_t mclCommRegister(const mclComm_t comm, void* buff, size_t size,
                            void** handle) {
  return mcl::apiCall(__func__, [&] {
    mcl::CommRef ref(comm);
    if (handle == nullptr)
      throw mcl::error(mclInvalidArgument, "%s: handle is NULL",
                       ref->label().c_str());
    *handle = ref->registrations.add(buff, size, ref->label());
  });
}

mclResult_t mclCommDeregister(const mclComm_t comm, void* handle) {
  return mcl::apiCall(__func__, [&] {
    mcl::CommRef ref(comm);
    ref->registrations.remove(handle, ref->label());
  });
}

}  // extern "C"
