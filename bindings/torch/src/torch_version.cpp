#include "torch_version.h"

#include <c10/util/Exception.h>

#include <stdexcept>

namespace mcl::torch_backend {

void throwBackendError(const std::string& message) {
#if TORCH_VERSION_MAJOR >= 2 && defined(C10_THROW_ERROR)
  C10_THROW_ERROR(DistBackendError, message);
#else
  throw std::runtime_error(message);
#endif
}

void throwValueError(const std::string& message) {
  C10_THROW_ERROR(ValueError, message);
}

void throwTypeError(const std::string& message) {
  C10_THROW_ERROR(TypeError, message);
}

}  // namespace mcl::torch_backend
