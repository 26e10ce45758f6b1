// The one registry of tunables: every MCL_* environment variable mcl reads is
// listed here with its default and its documentation, so `mcl-perf params`
// can print them and unknown MCL_* variables (typos) draw a warning.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/param_source.h"

namespace mcl {

// Core's rows, then each registered transport's (transport_registry.h).
std::vector<ParamDef> allParams();

// paramValue and paramInt, for the transports.
const ParamSource& environmentParams();

struct ParamValue {
  std::string text;
  const char* source;  // "env" or "default"
};

// The value of a registered parameter: the environment's, else the default.
ParamValue paramValue(const char* name);

// An integer parameter within [min, max]; anything else is an
// mclInvalidArgument naming the variable and the accepted range.
int64_t paramInt(const char* name, int64_t min, int64_t max);

// Warns once per process about MCL_* variables nobody reads.
void warnUnknownEnvironment();

}  // namespace mcl
