// mcl._mcl: the native half of the mcl package (bindings/python/mcl).
// Python code should use the package, which documents the API.
#include <pybind11/pybind11.h>

#include "buffer_view.h"
#include "communicator.h"
#include "errors.h"
#include "work.h"

namespace mcl::python {
void registerLibrary(pybind11::module_& m);
void registerCApi(pybind11::module_& m);
}  // namespace mcl::python

PYBIND11_MODULE(_mcl, m) {
  m.doc() = "Native part of the mcl package; use `import mcl`.";
  mcl::python::registerErrors(m);
  mcl::python::registerBufferViews(m);
  mcl::python::registerLibrary(m);
  mcl::python::registerWork(m);
  mcl::python::registerCommunicator(m);
  mcl::python::registerCApi(m);
}
