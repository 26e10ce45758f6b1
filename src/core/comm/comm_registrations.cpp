#include "core/comm/comm_registrations.h"

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "base/error.h"
#include "base/log.h"
#include "core/comm/shared_allocations.h"

namespace mcl {

CommRegistrations::~CommRegistrations() {
  for (auto& [handle, record] : records_)
    if (record->pinned) unpinShared(record->buff);
}

void* CommRegistrations::add(void* buff, size_t size,
                             const std::string& label) {
  if (buff == nullptr)
    throw error(mclInvalidArgument, "%s: buff is NULL", label.c_str());
  if (size == 0)
    throw error(mclInvalidArgument, "%s: size is 0", label.c_str());
  auto record = std::make_unique<Record>(Record{buff, size, false});
  record->pinned = pinShared(buff, size);
  if (!record->pinned)
    MCL_LOG(Info, kLogColl,
            "%s: registered %zu bytes at %p are not mclMemAlloc memory: "
            "peers cannot map them, so calls on them copy through the rings",
            label.c_str(), size, buff);
  void* handle = record.get();
  std::lock_guard<std::mutex> lock(mutex_);
  records_.emplace(handle, std::move(record));
  return handle;
}

void CommRegistrations::remove(void* handle, const std::string& label) {
  std::unique_ptr<Record> record;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = records_.find(handle);
    if (it == records_.end())
      throw error(mclInvalidArgument,
                  "%s: handle %p is not a registration of this communicator "
                  "(never made, made by another, or deregistered already)",
                  label.c_str(), handle);
    record = std::move(it->second);
    records_.erase(it);
  }
  if (record->pinned) unpinShared(record->buff);
}

size_t CommRegistrations::count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return records_.size();
}

}  // namespace mcl
