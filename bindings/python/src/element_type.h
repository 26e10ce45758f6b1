// What a buffer's elements are: from a buffer-protocol format string, a
// DLPack dtype, or a name the caller gives.
#pragma once

#include <dlpack/dlpack.h>
#include <mcl/mcl.h>

#include <cstddef>
#include <optional>
#include <string>

namespace mcl::python {

struct ElementType {
  std::string name;  // "float32", "bfloat16", "complex64", "int16", ...
  size_t itemsize = 1;
  // The type mcl reduces it as, when it has one; complex types reduce as
  // two floats (lanes 2), for sum and avg only.
  std::optional<mclDataType_t> reduceAs;
  size_t lanes = 1;
};

// From PEP 3118 format text ("f", "<d", "Zf", "T{...}", ...). Non-native
// byte order is refused; formats mcl cannot reduce become opaque types of
// the buffer's itemsize, which only data-moving operations accept.
ElementType elementTypeFromFormat(const char* format, size_t itemsize);
ElementType elementTypeFromDlpack(DLDataType dtype);
// A caller's name for the type ("bfloat16" on a uint16 array); its size
// must be the buffer's itemsize.
ElementType elementTypeFromName(const std::string& name, size_t itemsize,
                                const char* argument);
// The caller's dtype= for a buffer whose elements are `own`: the same type,
// or one NumPy has no name for (bfloat16, float8_e4m3, float8_e5m2) over
// integer or opaque storage of its size. Anything else would reinterpret
// bits the buffer already names, which is a mistake more often than not.
ElementType overrideElementType(const ElementType& own, const std::string& name,
                                const char* argument);
// The type called `name` ("float32", ...); mclInvalidArgument naming
// `argument` when there is none.
ElementType elementTypeNamed(const std::string& name, const char* argument);

// "sum" -> mclSum, ...; argument names the parameter in errors.
mclRedOp_t reduceOpFromName(const std::string& name);

}  // namespace mcl::python
