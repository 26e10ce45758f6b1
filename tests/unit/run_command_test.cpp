// runCommand: output and exit status of a real program, and the deadline
// holding against programs that hang, close their output early or leave
// children behind.
#include "platform/run_command.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <thread>

#include "platform/host_identity.h"

namespace mcl::platform {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// Bounds far from the timeouts used, so a slow machine cannot fail them.
constexpr auto kLongSleep = "30";
// Far below the sleeps the tests start: a call that waited for them would
// take kLongSleep, one that did not takes a few milliseconds (seconds on a
// very busy machine).
constexpr auto kBound = std::chrono::seconds(20);

TEST(RunCommand, ReturnsOutputAndExitStatus) {
  CommandResult r = runCommand({"sh", "-c", "echo hello; echo world; exit 3"},
                               milliseconds(10000));
  EXPECT_TRUE(r.started);
  EXPECT_FALSE(r.timedOut);
  EXPECT_EQ(r.exitCode, 3);
  EXPECT_EQ(r.output, "hello\nworld\n");
}

// A system tool gets this process's environment without the job's secrets.
TEST(RunCommand, ChildrenGetNoSecret) {
  setenv("MCL_SECRET", "00112233445566778899aabbccddeeff", 1);
  setenv("MCL_UNIQUE_ID", "mcl1:127.0.0.1:1:00112233445566778899aabbccddeeff",
         1);
  setenv("RUN_COMMAND_TEST_MARK", "kept", 1);
  CommandResult r = runCommand({"env"}, milliseconds(10000));
  unsetenv("MCL_SECRET");
  unsetenv("MCL_UNIQUE_ID");
  unsetenv("RUN_COMMAND_TEST_MARK");
  ASSERT_TRUE(r.started);
  EXPECT_NE(r.output.find("RUN_COMMAND_TEST_MARK=kept"), std::string::npos);
  EXPECT_EQ(r.output.find("MCL_SECRET"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("MCL_UNIQUE_ID"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("00112233445566778899"), std::string::npos);
}

TEST(RunCommand, MissingProgramIsNotStarted) {
  CommandResult r =
      runCommand({"/nonexistent/mcl-no-such-tool"}, milliseconds(1000));
  EXPECT_FALSE(r.started);
}

TEST(RunCommand, HangingProgramIsKilledAtTheDeadline) {
  auto start = Clock::now();
  CommandResult r = runCommand({"sleep", kLongSleep}, milliseconds(200));
  EXPECT_LT(Clock::now() - start, kBound);
  EXPECT_TRUE(r.started);
  EXPECT_TRUE(r.timedOut);
}

TEST(RunCommand, ProgramThatClosesItsOutputAndKeepsRunningIsKilled) {
  auto start = Clock::now();
  CommandResult r = runCommand(
      {"sh", "-c", std::string("echo hi; exec >&-; sleep ") + kLongSleep},
      milliseconds(5000));
  EXPECT_LT(Clock::now() - start, kBound);
  EXPECT_TRUE(r.timedOut);
  EXPECT_EQ(r.output, "hi\n");
}

TEST(RunCommand, ChildLeftHoldingTheOutputDoesNotOutliveTheCall) {
  auto start = Clock::now();
  CommandResult r = runCommand(
      {"sh", "-c", std::string("sleep ") + kLongSleep + " & echo $!; exit 0"},
      milliseconds(5000));
  EXPECT_LT(Clock::now() - start, kBound);
  // The tool itself finished well: its output and status count.
  EXPECT_FALSE(r.timedOut);
  EXPECT_EQ(r.exitCode, 0);
  ASSERT_FALSE(r.output.empty());
  // The sleep it left behind was killed (it may linger as a zombie until
  // its new parent reaps it; processAlive counts that as gone).
  int child = std::stoi(r.output);
  auto until = Clock::now() + std::chrono::seconds(5);
  while (processAlive(child) && Clock::now() < until)
    std::this_thread::sleep_for(milliseconds(10));
  EXPECT_FALSE(processAlive(child));
}

TEST(RunCommand, OutputBeyondTheLimitStopsTheProgram) {
  auto start = Clock::now();
  CommandResult r = runCommand({"yes"}, milliseconds(20000), 1 << 16);
  EXPECT_LT(Clock::now() - start, kBound);
  EXPECT_LE(r.output.size(), size_t{1} << 16);
  EXPECT_EQ(r.exitCode, -1);
}

}  // namespace
}  // namespace mcl::platform
