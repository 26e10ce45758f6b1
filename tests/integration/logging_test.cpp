// Logging and the environment, end to end through the mcl-perf binary (the
// log settings are read once per process, so each case needs a fresh one):
// MCL_DEBUG / MCL_DEBUG_FILE reach the file named with %h and %p, the secret
// never appears in a log, and a misspelt MCL_* variable draws a warning.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "build_paths.h"
#include "command_run.h"

namespace {

namespace fs = std::filesystem;
using mcl::test::CommandRun;
using mcl::test::runShell;

const std::string kPerf = mcl::testing::perfPath();
const std::string kSmallRun = " allreduce -np 2 -b 8 -e 8 -n 2 -w 1 -c 1";

fs::path freshDir(const char* name) {
  fs::path dir =
      fs::temp_directory_path() /
      (std::string("mcl-log-test-") + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string readAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Logging, InfoGoesToOneFilePerProcessWithoutTheSecret) {
  fs::path dir = freshDir("info");
  CommandRun run = runShell("MCL_DEBUG=INFO MCL_DEBUG_FILE=" + dir.string() +
                            "/mcl.%h.%p.log " + kPerf + kSmallRun);
  ASSERT_EQ(run.status, 0) << run.output;
  std::string all;
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    ++files;
    EXPECT_NE(entry.path().filename().string().find(".log"), std::string::npos);
    all += readAll(entry.path());
  }
  // The parent (rendezvous root) and both ranks log, each to its own file.
  EXPECT_GE(files, 3);
  EXPECT_NE(all.find("MCL INFO"), std::string::npos) << all;
  EXPECT_NE(all.find("rank 0 of 2 joined"), std::string::npos) << all;
  EXPECT_NE(all.find("rank 1/2: ready"), std::string::npos) << all;
  // 32 hex digits in a row would be the secret.
  EXPECT_FALSE(std::regex_search(all, std::regex("[0-9a-f]{32}"))) << all;
  fs::remove_all(dir);
}

TEST(Logging, SubsystemFilterKeepsOthersOut) {
  fs::path dir = freshDir("subsys");
  CommandRun run = runShell(
      "MCL_DEBUG=INFO MCL_DEBUG_SUBSYS=SHM MCL_DEBUG_FILE=" + dir.string() +
      "/log.%p " + kPerf + kSmallRun);
  ASSERT_EQ(run.status, 0) << run.output;
  std::string all;
  for (const auto& entry : fs::directory_iterator(dir))
    all += readAll(entry.path());
  EXPECT_NE(all.find("shm segment"), std::string::npos) << all;
  EXPECT_EQ(all.find("joined"), std::string::npos) << all;
  fs::remove_all(dir);
}

TEST(Logging, MisspeltVariableDrawsAWarning) {
  CommandRun run = runShell("MCL_TIMEOUTT=5 " + kPerf + kSmallRun);
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("MCL_TIMEOUTT is not an mcl parameter"),
            std::string::npos)
      << run.output;
}

TEST(Logging, BadParameterValueFailsInitNamingIt) {
  CommandRun run = runShell("MCL_TIMEOUT=soon " + kPerf + kSmallRun);
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.output.find("MCL_TIMEOUT='soon'"), std::string::npos)
      << run.output;
}

TEST(Logging, RdmaWithinOneHostIsAClearError) {
  CommandRun run = runShell(kPerf + kSmallRun + " --transport rdma");
  EXPECT_NE(run.status, 0);
  // RDMA joins Macs; the message says what serves one host instead and
  // points to the emulated fabric. (Between hosts without RDMA devices:
  // tests/cluster/test_topology.py.)
  EXPECT_NE(run.output.find("all 2 ranks are on this host"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("MCL_RDMA_PROVIDER=emu"), std::string::npos)
      << run.output;
}

}  // namespace
