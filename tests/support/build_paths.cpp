#include "build_paths.h"

#include <string>

#ifndef MCL_FIXTURE_DIR
#error "MCL_FIXTURE_DIR must name tests/fixtures"
#endif
// Empty in a build without mcl-perf (the sanitizers').
#ifndef MCL_PERF_PATH
#define MCL_PERF_PATH ""
#endif

namespace mcl::testing {

const std::string& fixtureDir() {
  static const std::string dir = MCL_FIXTURE_DIR;
  return dir;
}

const std::string& perfPath() {
  static const std::string path = MCL_PERF_PATH;
  return path;
}

}  // namespace mcl::testing
