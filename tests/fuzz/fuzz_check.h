// What every target asserts: an input is either accepted or refused with
// the one mcl::Error code its parser documents; another code, another
// exception type, or a broken invariant of what was accepted is a bug, and
// aborts so libFuzzer keeps the input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "base/error.h"

namespace mcl::fuzz {

inline void check(bool ok, const char* what) {
  if (ok) return;
  fprintf(stderr, "fuzz check failed: %s\n", what);
  abort();
}

// Runs parse(); true when it returned, false when it threw an mcl::Error
// with `refusal`. Other exceptions escape to libFuzzer, which reports them.
template <typename Parse>
bool acceptedOr(mclResult_t refusal, Parse&& parse) {
  try {
    std::forward<Parse>(parse)();
    return true;
  } catch (const Error& e) {
    if (e.code() != refusal) {
      fprintf(stderr, "refused with %s, expected %s: %s\n",
              resultName(e.code()), resultName(refusal), e.what());
      abort();
    }
    return false;
  }
}

}  // namespace mcl::fuzz
