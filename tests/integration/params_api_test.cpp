// The parameter registry through the API (mclGetParam) and `mcl-perf
// params`: every tunable listed once with a default and a doc, bad
// arguments refused by name, the value in effect and its source shown, and
// the secret never printed.
#include <gtest/gtest.h>
#include <mcl/mcl.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "build_paths.h"
#include "command_run.h"

namespace mcl::test {
namespace {

const std::string kPerf = mcl::testing::perfPath();

std::vector<std::string> paramNames() {
  std::vector<std::string> names;
  const char* name = nullptr;
  const char* defaultValue = nullptr;
  const char* doc = nullptr;
  for (int i = 0;
       mclGetParam(i, &name, &defaultValue, &doc) == mclSuccess && name; ++i)
    names.push_back(name);
  return names;
}

TEST(ParamsApi, EveryParamHasANameADefaultAndADoc) {
  std::set<std::string> seen;
  const char* name = nullptr;
  const char* defaultValue = nullptr;
  const char* doc = nullptr;
  int i = 0;
  for (; mclGetParam(i, &name, &defaultValue, &doc) == mclSuccess && name;
       ++i) {
    EXPECT_EQ(std::string(name).rfind("MCL_", 0), 0u) << name;
    ASSERT_NE(defaultValue, nullptr) << name;
    ASSERT_NE(doc, nullptr) << name;
    EXPECT_GT(std::strlen(doc), 10u) << name;
    EXPECT_TRUE(seen.insert(name).second) << name << " listed twice";
  }
  EXPECT_GE(i, 20);  // MCL_DEBUG, MCL_TIMEOUT, MCL_TRANSPORT, MCL_ALGO, ...
  EXPECT_TRUE(seen.count("MCL_TIMEOUT"));
  EXPECT_TRUE(seen.count("MCL_ALGO"));
  // Past the last: success and NULLs, as mclGetAlgorithmName does.
  ASSERT_EQ(mclGetParam(i, &name, &defaultValue, &doc), mclSuccess);
  EXPECT_EQ(name, nullptr);
  EXPECT_EQ(doc, nullptr);
}

TEST(ParamsApi, BadArgumentsAreRefusedByName) {
  const char* name = nullptr;
  const char* defaultValue = nullptr;
  const char* doc = nullptr;
  EXPECT_EQ(mclGetParam(-1, &name, &defaultValue, &doc), mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("index -1"),
            std::string::npos)
      << mclGetLastError(nullptr);
  EXPECT_EQ(mclGetParam(0, nullptr, &defaultValue, &doc), mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("name is NULL"),
            std::string::npos);
  EXPECT_EQ(mclGetParam(0, &name, nullptr, &doc), mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("defaultValue"),
            std::string::npos);
  EXPECT_EQ(mclGetParam(0, &name, &defaultValue, nullptr), mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("doc is NULL"),
            std::string::npos);
}

TEST(PerfParams, ListsEveryParamWithItsValueAndSource) {
  const std::string secret = "00112233445566778899aabbccddeeff";
  CommandRun run =
      runShell("MCL_TIMEOUT=77 MCL_SECRET=" + secret + " " + kPerf + " params");
  ASSERT_EQ(run.status, 0) << run.output;
  for (const std::string& name : paramNames())
    EXPECT_NE(run.output.find("  " + name + " "), std::string::npos)
        << name << " missing:\n"
        << run.output;
  std::istringstream lines(run.output);
  bool timeout = false;
  bool transport = false;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream cols(line);
    std::string name, value, source;
    cols >> name >> value >> source;
    if (name == "MCL_TIMEOUT") {
      timeout = true;
      EXPECT_EQ(value, "77") << line;
      EXPECT_EQ(source, "env") << line;
    }
    if (name == "MCL_TRANSPORT") {
      transport = true;
      EXPECT_EQ(source, "default") << line;
    }
  }
  EXPECT_TRUE(timeout && transport) << run.output;
  EXPECT_EQ(run.output.find(secret), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("(redacted)"), std::string::npos);
}

TEST(PerfParams, WritesJsonAndRefusesStrayArguments) {
  const std::string path = ::testing::TempDir() + "mcl_params.json";
  CommandRun run = runShell("MCL_DEBUG=INFO " + kPerf + " params -J " + path);
  ASSERT_EQ(run.status, 0) << run.output;
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j["params"].size(), paramNames().size());
  bool debug = false;
  for (const auto& p : j["params"])
    if (p["name"] == "MCL_DEBUG") {
      debug = true;
      EXPECT_EQ(p["value"], "INFO");
      EXPECT_EQ(p["source"], "env");
      EXPECT_EQ(p["default"], "WARN");
    }
  EXPECT_TRUE(debug);
  run = runShell(kPerf + " params allreduce");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("unexpected argument 'allreduce'"),
            std::string::npos)
      << run.output;
}

}  // namespace
}  // namespace mcl::test
