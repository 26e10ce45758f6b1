// Where the tests find what the build put beside them. The paths are
// absolute and differ from clone to clone, so they are compiled into one
// file alone (build_paths.cpp): every other test file then compiles the
// same in any clone, and a fresh CI clone finds it in ccache.
#pragma once

#include <string>

namespace mcl::testing {

// tests/fixtures of the source tree the tests were built from.
const std::string& fixtureDir();

// The mcl-perf built with the tests. Only files that the build leaves out
// where there is no mcl-perf call it (tests/integration/CMakeLists.txt).
const std::string& perfPath();

}  // namespace mcl::testing
