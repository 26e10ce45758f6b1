// Tunables as the layers below core see them: a row of the parameter
// registry (name, default, documentation), and the source values are read
// from. Core owns the registry (core/params/params.h) and hands each transport
// a ParamSource, so a transport declares and reads its own MCL_* variables
// without knowing where core keeps them.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace mcl {

struct ParamDef {
  const char* name;          // environment variable
  const char* defaultValue;  // as text
  const char* doc;
};

class ParamSource {
 public:
  virtual ~ParamSource() = default;
  // The value of a registered parameter: the environment's, else the
  // default.
  virtual std::string text(const char* name) const = 0;
  // An integer parameter within [min, max]; anything else throws
  // mclInvalidArgument naming the variable and the accepted range.
  virtual int64_t integer(const char* name, int64_t min, int64_t max) const = 0;
};

// A transport's rows of the registry.
using ParamTable = std::span<const ParamDef>;

}  // namespace mcl
