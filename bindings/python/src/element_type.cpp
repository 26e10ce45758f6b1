#include "element_type.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "errors.h"

namespace mcl::python {
namespace {

struct Named {
  const char* name;
  size_t itemsize;
  std::optional<mclDataType_t> reduceAs;
};

constexpr std::array kNamed = {
    Named{"bool", 1, mclUint8},  // max and min only: see reducedForm
    Named{"int8", 1, mclInt8},
    Named{"uint8", 1, mclUint8},
    Named{"int16", 2, std::nullopt},
    Named{"uint16", 2, std::nullopt},
    Named{"int32", 4, mclInt32},
    Named{"uint32", 4, mclUint32},
    Named{"int64", 8, mclInt64},
    Named{"uint64", 8, mclUint64},
    Named{"float16", 2, mclFloat16},
    Named{"bfloat16", 2, mclBfloat16},
    Named{"float32", 4, mclFloat32},
    Named{"float64", 8, mclFloat64},
    Named{"float8_e4m3", 1, mclFloat8e4m3},
    Named{"float8_e5m2", 1, mclFloat8e5m2},
    Named{"complex64", 8, mclFloat32},
    Named{"complex128", 16, mclFloat64},
};

ElementType named(const char* name) {
  for (const Named& n : kNamed) {
    if (std::strcmp(n.name, name) == 0) {
      ElementType t{n.name, n.itemsize, n.reduceAs, 1};
      if (std::strncmp(name, "complex", 7) == 0) t.lanes = 2;
      return t;
    }
  }
  fail(mclInternalError, std::string("unknown element type ") + name);
}

ElementType opaque(const std::string& what, size_t itemsize) {
  return ElementType{what, itemsize, std::nullopt, 1};
}

const char* integerName(bool isSigned, size_t itemsize) {
  switch (itemsize) {
    case 1:
      return isSigned ? "int8" : "uint8";
    case 2:
      return isSigned ? "int16" : "uint16";
    case 4:
      return isSigned ? "int32" : "uint32";
    case 8:
      return isSigned ? "int64" : "uint64";
    default:
      return nullptr;
  }
}

bool littleEndianHost() {
  const uint16_t probe = 1;
  unsigned char first;
  std::memcpy(&first, &probe, 1);
  return first == 1;
}

}  // namespace

ElementType elementTypeFromFormat(const char* format, size_t itemsize) {
  std::string text = format != nullptr ? format : "B";
  // Python objects (NumPy's dtype=object, alone or in a structure) are
  // pointers into this process, counted references: copied as bytes they
  // would be freed twice here and mean nothing on a peer.
  if (text.find('O') != std::string::npos)
    invalidArgument("the buffer holds Python objects (format '" + text +
                    "'): mcl moves plain data only; convert to a numeric "
                    "array or pickle it");
  size_t at = 0;
  if (!text.empty() && std::strchr("@=<>!", text[0]) != nullptr) {
    const char order = text[0];
    const bool big = order == '>' || order == '!';
    const bool little = order == '<';
    if ((big && littleEndianHost()) || (little && !littleEndianHost()))
      invalidArgument("the buffer's byte order (format '" + text +
                      "') is not this machine's; convert it first (for "
                      "NumPy: astype with a native dtype)");
    at = 1;
  }
  const std::string code = text.substr(at);
  if (code == "e") return named("float16");
  if (code == "f") return named("float32");
  if (code == "d") return named("float64");
  if (code == "Zf") return named("complex64");
  if (code == "Zd") return named("complex128");
  if (code == "?") return named("bool");
  if (code == "c") return named("uint8");
  if (code.size() == 1 && std::strchr("bhilqn", code[0]) != nullptr)
    if (const char* n = integerName(true, itemsize)) return named(n);
  if (code.size() == 1 && std::strchr("BHILQN", code[0]) != nullptr)
    if (const char* n = integerName(false, itemsize)) return named(n);
  return opaque("format '" + text + "'", itemsize);
}

ElementType elementTypeFromDlpack(DLDataType dtype) {
  if (dtype.lanes != 1)
    invalidArgument("DLPack tensors with vector lanes (" +
                    std::to_string(dtype.lanes) + ") are not supported");
  const size_t itemsize = dtype.bits / 8;
  if (dtype.bits % 8 != 0 || itemsize == 0)
    invalidArgument("DLPack element of " + std::to_string(dtype.bits) +
                    " bits is not whole bytes");
  switch (dtype.code) {
    case kDLInt:
      if (const char* n = integerName(true, itemsize)) return named(n);
      break;
    case kDLUInt:
      if (const char* n = integerName(false, itemsize)) return named(n);
      break;
    case kDLFloat:
      if (itemsize == 2) return named("float16");
      if (itemsize == 4) return named("float32");
      if (itemsize == 8) return named("float64");
      break;
    case kDLBfloat:
      if (itemsize == 2) return named("bfloat16");
      break;
    case kDLComplex:
      if (itemsize == 8) return named("complex64");
      if (itemsize == 16) return named("complex128");
      break;
    default:
      // kDLBool (6) arrived after DLPack 0.6: compare the number.
      if (dtype.code == 6 && itemsize == 1) return named("bool");
      break;
  }
  return opaque("DLPack type code " + std::to_string(dtype.code) + " of " +
                    std::to_string(dtype.bits) + " bits",
                itemsize);
}

ElementType elementTypeNamed(const std::string& name, const char* argument) {
  for (const Named& n : kNamed)
    if (name == n.name) return named(n.name);
  std::string known;
  for (const Named& n : kNamed)
    known += std::string(known.empty() ? "" : ", ") + n.name;
  invalidArgument(std::string(argument) + ": unknown dtype \"" + name +
                  "\" (known: " + known + ")");
}

ElementType elementTypeFromName(const std::string& name, size_t itemsize,
                                const char* argument) {
  ElementType t = elementTypeNamed(name, argument);
  if (t.itemsize != itemsize)
    invalidArgument(std::string(argument) + ": dtype \"" + name + "\" is " +
                    std::to_string(t.itemsize) +
                    " bytes, but the buffer's elements are " +
                    std::to_string(itemsize));
  return t;
}

ElementType overrideElementType(const ElementType& own, const std::string& name,
                                const char* argument) {
  ElementType wanted = elementTypeFromName(name, own.itemsize, argument);
  if (wanted.name == own.name) return wanted;
  const bool storage = !own.reduceAs || own.name == "bool" ||
                       own.name.starts_with("int") ||
                       own.name.starts_with("uint");
  const bool unnamedByNumpy =
      wanted.name == "bfloat16" || wanted.name.starts_with("float8");
  const bool opaque =
      own.name.starts_with("format") || own.name.starts_with("DLPack");
  if (opaque || (storage && unnamedByNumpy)) return wanted;
  invalidArgument(std::string(argument) + ": dtype \"" + name +
                  "\" contradicts the buffer's own " + own.name +
                  " elements (dtype= names what the buffer cannot: "
                  "bfloat16, float8_e4m3 or float8_e5m2 over integer "
                  "storage); convert the array instead");
}

mclRedOp_t reduceOpFromName(const std::string& name) {
  static constexpr std::array<std::pair<const char*, mclRedOp_t>, 5> kOps = {
      {{"sum", mclSum},
       {"prod", mclProd},
       {"max", mclMax},
       {"min", mclMin},
       {"avg", mclAvg}}};
  for (const auto& [text, op] : kOps)
    if (name == text) return op;
  invalidArgument("op: unknown reduction \"" + name +
                  "\" (sum, prod, max, min or avg)");
}

}  // namespace mcl::python
