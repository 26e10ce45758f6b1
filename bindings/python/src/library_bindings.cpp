// What is not tied to a communicator: the version, the tunables, unique
// ids and memory same-host peers can map.
#include <mcl/mcl.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstddef>
#include <string>
#include <tuple>
#include <vector>

#include "errors.h"

namespace py = pybind11;

namespace mcl::python {
namespace {

std::string versionString() {
  int code = 0;
  check(mclGetVersion(&code));
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) +
         "." + std::to_string(code % 100);
}

std::vector<std::tuple<std::string, std::string, std::string>> params() {
  std::vector<std::tuple<std::string, std::string, std::string>> all;
  for (int i = 0;; ++i) {
    const char* name = nullptr;
    const char* value = nullptr;
    const char* doc = nullptr;
    check(mclGetParam(i, &name, &value, &doc));
    if (name == nullptr) return all;
    all.emplace_back(name, value, doc);
  }
}

std::string idToString(const mclUniqueId& id) {
  char text[MCL_UNIQUE_ID_STRING_BYTES];
  check(mclUniqueIdToString(&id, text, sizeof text));
  return text;
}

std::string newUniqueId() {
  mclUniqueId id;
  {
    py::gil_scoped_release release;
    check(mclGetUniqueId(&id));
  }
  return idToString(id);
}

// Parses and prints again: a typo fails here, naming the text's problem,
// rather than as a hang at init.
std::string checkUniqueId(const std::string& text) {
  mclUniqueId id;
  check(mclUniqueIdFromString(text.c_str(), &id));
  return idToString(id);
}

// mclMemAlloc memory with the buffer protocol; freed with the last view.
class SharedMemory {
 public:
  explicit SharedMemory(size_t bytes) : bytes_(bytes) {
    if (bytes > 0) check(mclMemAlloc(&data_, bytes));
  }
  ~SharedMemory() {
    if (data_ != nullptr) mclMemFree(data_);
  }
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;

  py::buffer_info info() {
    return py::buffer_info(data_ != nullptr ? data_ : &empty_, 1,
                           py::format_descriptor<unsigned char>::format(), 1,
                           {static_cast<py::ssize_t>(bytes_)}, {1});
  }
  size_t size() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_;
  unsigned char empty_ = 0;  // a valid address for zero bytes
};

}  // namespace

void registerLibrary(py::module_& m) {
  m.def("version_string", &versionString);
  m.def("params", &params);
  m.def("new_unique_id", &newUniqueId);
  m.def("check_unique_id", &checkUniqueId, py::arg("text"));
  py::class_<SharedMemory>(m, "SharedMemory", py::buffer_protocol())
      .def(py::init<size_t>(), py::arg("nbytes"))
      .def("__len__", &SharedMemory::size)
      .def_buffer(&SharedMemory::info);
}

}  // namespace mcl::python
