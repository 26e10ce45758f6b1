// Python arguments that pybind11 would refuse with a bare TypeError (an
// int out of range, None for a name): checked here, so the error names the
// argument and is an mcl.InvalidArgumentError like every other refusal.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>

namespace mcl::python {

// An int in C int's range.
int intArgument(pybind11::handle value, const char* name);
// A rank of a communicator of `size` ranks.
int rankArgument(pybind11::handle value, int size, const char* name);
// A count >= 0.
size_t countArgument(pybind11::handle value, const char* name);
std::string textArgument(pybind11::handle value, const char* name);

}  // namespace mcl::python
