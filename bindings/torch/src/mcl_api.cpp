#include "mcl_api.h"

#include <pybind11/pybind11.h>

#include <stdexcept>

#include "torch_version.h"

namespace mcl::torch_backend {

namespace py = pybind11;

const python::CApiTable& api() {
  // Fetched once, under the GIL: the first caller is the backend's
  // constructor, which Python calls.
  static const python::CApiTable* const table = [] {
    py::object capsule = py::module_::import("mcl._mcl").attr("_C_API");
    const auto* t = static_cast<const python::CApiTable*>(
        PyCapsule_GetPointer(capsule.ptr(), python::kCApiCapsuleName));
    if (t == nullptr) throw py::error_already_set();
    if (t->version != python::kCApiTableVersion ||
        t->size != sizeof(python::CApiTable))
      throw std::runtime_error(
          "mcl.torch: the installed mcl package (its _mcl module) is of "
          "another build than the torch backend: reinstall mcl (pip "
          "install '.[torch]')");
    return t;
  }();
  return *table;
}

std::string failureText(mclResult_t result, mclComm_t comm, const char* what,
                        int timeoutSeconds) {
  const char* last = api().getLastError(comm);
  const std::string detail =
      last != nullptr && *last != '\0' ? last : api().getErrorString(result);
  if (result == mclTimeout)
    return std::string("mcl backend: ") + what + ": Timed out after " +
           std::to_string(timeoutSeconds) +
           " s (the group's timeout): " + detail;
  return std::string("mcl backend: ") + what + " failed: " + detail;
}

void check(mclResult_t result, mclComm_t comm, const char* what,
           int timeoutSeconds) {
  if (result == mclSuccess) return;
  const std::string text = failureText(result, comm, what, timeoutSeconds);
  if (result == mclInvalidArgument) throwValueError(text);
  throwBackendError(text);
}

}  // namespace mcl::torch_backend
