// mclCommRegister's records for one communicator: each handle is a live
// record of this communicator (others' handles and made-up ones are
// refused), and pins its mclMemAlloc memory until deregistered or the
// communicator goes.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace mcl {

class CommRegistrations {
 public:
  CommRegistrations() = default;
  CommRegistrations(const CommRegistrations&) = delete;
  CommRegistrations& operator=(const CommRegistrations&) = delete;
  ~CommRegistrations();

  // Returns the handle. Throws mclInvalidArgument for a NULL buffer or a
  // size of 0. label names the communicator in messages.
  void* add(void* buff, size_t size, const std::string& label);
  // Throws mclInvalidArgument when handle is not a live record of this
  // communicator.
  void remove(void* handle, const std::string& label);
  size_t count() const;

 private:
  struct Record {
    void* buff;
    size_t size;
    bool pinned;  // inside mclMemAlloc memory
  };
  mutable std::mutex mutex_;
  std::map<void*, std::unique_ptr<Record>> records_;  // keyed by handle
};

}  // namespace mcl
