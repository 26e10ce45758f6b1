// RDMA teardown on the emulated fabric: 1000 init/destroy cycles leave no
// queue pair wire (shared memory), descriptor, thread, mapping or (sanitized
// builds) memory behind.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "build_paths.h"
#include "init_destroy_cycles.h"

namespace mcl::test {
namespace {

#if defined(__linux__)
TEST(RdmaLifecycle, ThousandInitDestroyCyclesLeakNothing) {
  const std::string fabric = mcl::testing::fixtureDir() + "/rdma/pair2.json";
  InitDestroyCycles run;
  run.setup = [fabric] {
    setenv("MCL_TRANSPORT", "rdma", 1);
    setenv("MCL_RDMA_PROVIDER", "emu", 1);
    setenv("MCL_EMU_FABRIC", fabric.c_str(), 1);
  };
  run.allReduceEvery = 25;
  run.shmPrefix = "mcl-e-";  // the emulated fabric's queue pair wires
  expectInitDestroyCyclesLeakNothing(run);
}
#endif

}  // namespace
}  // namespace mcl::test
