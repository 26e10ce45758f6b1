// mcl._torch_backend: the C++ "mcl" backend of torch.distributed, built
// against the torch it is installed with. mcl/torch.py makes it (after
// the handshake in the store) and falls back to its Python backend where
// this module is missing.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/version.h>

#include "backend.h"
#include "device_kernels.h"

namespace py = pybind11;
using mcl::torch_backend::Backend;

PYBIND11_MODULE(_torch_backend, m) {
  m.doc() = "The C++ torch.distributed backend \"mcl\"; use mcl.torch.";
  m.attr("TORCH_VERSION") = TORCH_VERSION;
  // The class torch dispatches to: its ProcessGroup on PyTorch 1.x, the
  // per-device Backend on 2.x.
  py::object base =
      py::module_::import("torch._C._distributed_c10d")
          .attr(mcl::torch_backend::kSplitProcessGroup ? "Backend"
                                                       : "ProcessGroup");
  py::class_<Backend, c10::intrusive_ptr<Backend>>(m, "NativeBackend", base)
      .def(py::init<int, int, std::string, int, py::object>(), py::arg("rank"),
           py::arg("size"), py::arg("unique_id"), py::arg("timeout_seconds"),
           py::arg("helper"))
      .def_property_readonly("helper", &Backend::helper)
      .def_property_readonly("timeout_seconds", &Backend::timeoutSeconds)
      .def("topology", &Backend::topology,
           py::call_guard<py::gil_scoped_release>())
      .def("close", &Backend::close, py::call_guard<py::gil_scoped_release>());
  m.def("add_device_kernels", &mcl::torch_backend::addDeviceKernels,
        py::arg("device_type"));
}
