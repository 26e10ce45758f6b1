// Tests for the parameter registry (core/params/params.h) and the communicator
// settings built from mclConfig_t and the environment (core/params/settings.h).
// Every test starts with the registered MCL_* variables unset and puts the
// caller's environment back afterwards.
#include <gtest/gtest.h>

#include <mcl/mcl.h>
#include <cstddef>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "build_paths.h"
#include "core/params/params.h"
#include "core/params/settings.h"
#include "transports/rdma/rdma_options.h"
#include "transports/shm/shm_options.h"

namespace mcl {
namespace {

class ParamsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const ParamDef& p : allParams()) {
      const char* v = getenv(p.name);
      saved_.emplace_back(p.name,
                          v ? std::optional<std::string>(v) : std::nullopt);
      unsetenv(p.name);
    }
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }
  static void set(const char* name, const char* value) {
    setenv(name, value, 1);
  }

  // Runs f and expects mclInvalidArgument whose message mentions `says`.
  static void expectInvalid(const std::function<void()>& f, const char* says) {
    try {
      f();
      ADD_FAILURE() << "no error (expected one mentioning '" << says << "')";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), mclInvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos)
          << "'" << e.what() << "' does not mention '" << says << "'";
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// ---- the registry ----

TEST_F(ParamsTest, EveryParameterIsNamedDocumentedAndDefaulted) {
  std::set<std::string> names;
  ASSERT_FALSE(allParams().empty());
  for (const ParamDef& p : allParams()) {
    ASSERT_NE(p.name, nullptr);
    EXPECT_EQ(std::strncmp(p.name, "MCL_", 4), 0) << p.name;
    EXPECT_TRUE(names.insert(p.name).second) << p.name << " listed twice";
    EXPECT_NE(p.defaultValue, nullptr) << p.name;
    ASSERT_NE(p.doc, nullptr) << p.name;
    EXPECT_GT(std::strlen(p.doc), 10u) << p.name << " has no real doc";
    ParamValue v = paramValue(p.name);
    EXPECT_STREQ(v.source, "default") << p.name;
    EXPECT_EQ(v.text, p.defaultValue) << p.name;
  }
  for (const char* used :
       {"MCL_TIMEOUT", "MCL_TRANSPORT", "MCL_SHM_SLOT_BYTES", "MCL_SHM_SLOTS",
        "MCL_SHM_RING_STORES", "MCL_SPIN_US", "MCL_YIELD_US", "MCL_DEBUG",
        "MCL_DEBUG_SUBSYS", "MCL_DEBUG_FILE"})
    EXPECT_EQ(names.count(used), 1u) << used << " is read but not registered";
}

TEST_F(ParamsTest, EnvironmentOverridesTheDefaultUnlessEmpty) {
  set("MCL_TRANSPORT", "shm");
  ParamValue v = paramValue("MCL_TRANSPORT");
  EXPECT_EQ(v.text, "shm");
  EXPECT_STREQ(v.source, "env");
  set("MCL_TRANSPORT", "");
  EXPECT_EQ(paramValue("MCL_TRANSPORT").text, "auto");
  EXPECT_STREQ(paramValue("MCL_TRANSPORT").source, "default");
}

TEST_F(ParamsTest, UnregisteredNameIsInternalError) {
  try {
    paramValue("MCL_NOT_A_PARAM");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclInternalError);
    EXPECT_NE(std::string(e.what()).find("MCL_NOT_A_PARAM"), std::string::npos);
  }
}

TEST_F(ParamsTest, ParamIntChecksSyntaxAndRange) {
  EXPECT_EQ(paramInt("MCL_TIMEOUT", 1, 100000), 300);  // the default
  set("MCL_TIMEOUT", "17");
  EXPECT_EQ(paramInt("MCL_TIMEOUT", 17, 17), 17);  // bounds are inclusive
  set("MCL_TIMEOUT", "-5");
  EXPECT_EQ(paramInt("MCL_TIMEOUT", -10, 10), -5);
  for (const char* bad : {"abc", "12x", "1.5", "0x10", "5 ",
                          "99999999999999999999", "-99999999999999999999"}) {
    SCOPED_TRACE(bad);
    set("MCL_TIMEOUT", bad);
    expectInvalid([] { paramInt("MCL_TIMEOUT", -1000, 1000); }, "MCL_TIMEOUT");
  }
  set("MCL_TIMEOUT", "0");
  expectInvalid([] { paramInt("MCL_TIMEOUT", 1, 10); }, "between 1 and 10");
  set("MCL_TIMEOUT", "11");
  expectInvalid([] { paramInt("MCL_TIMEOUT", 1, 10); }, "'11'");
}

// ---- settings ----

TEST_F(ParamsTest, NullConfigTakesDefaults) {
  CommSettings s = loadSettings(nullptr);
  EXPECT_EQ(s.timeoutSeconds, 300);
  EXPECT_EQ(s.transport, "auto");
  EXPECT_EQ(s.name, "");
  transport::shm::ShmOptions shm =
      transport::shm::loadShmOptions(environmentParams());
  EXPECT_EQ(shm.slotBytes, 65536u);
  EXPECT_EQ(shm.slots, 8u);
  EXPECT_EQ(s.spin, "auto");
  EXPECT_EQ(s.yield, "auto");
}

TEST_F(ParamsTest, NullConfigTakesTheEnvironment) {
  set("MCL_TIMEOUT", "9");
  set("MCL_TRANSPORT", "shm");
  set("MCL_SHM_SLOT_BYTES", "128");
  set("MCL_SHM_SLOTS", "3");
  set("MCL_SPIN_US", "5");
  set("MCL_YIELD_US", "7");
  CommSettings s = loadSettings(nullptr);
  EXPECT_EQ(s.timeoutSeconds, 9);
  EXPECT_EQ(s.transport, "shm");
  transport::shm::ShmOptions shm =
      transport::shm::loadShmOptions(environmentParams());
  EXPECT_EQ(shm.slotBytes, 128u);
  EXPECT_EQ(shm.slots, 3u);
  WaitPolicy w = waitPolicyFor(s, 1);
  EXPECT_EQ(w.spinNs, 5000);
  EXPECT_EQ(w.yieldNs, 7000);
}

TEST_F(ParamsTest, ConfigFieldsWinOverTheEnvironment) {
  set("MCL_TIMEOUT", "9");
  set("MCL_TRANSPORT", "bogus");  // never read: the config names one
  mclConfig_t config = MCL_CONFIG_INITIALIZER;
  config.timeoutSeconds = 42;
  config.transport = "shm";
  const std::string longName(100, 'n');
  config.commName = longName.c_str();
  CommSettings s = loadSettings(&config);
  EXPECT_EQ(s.timeoutSeconds, 42);
  EXPECT_EQ(s.transport, "shm");
  EXPECT_EQ(s.name, std::string(64, 'n')) << "names are cut to 64 chars";
}

TEST_F(ParamsTest, InitializerLeavesFieldsToTheEnvironment) {
  set("MCL_TIMEOUT", "11");
  mclConfig_t config = MCL_CONFIG_INITIALIZER;
  CommSettings s = loadSettings(&config);
  EXPECT_EQ(s.timeoutSeconds, 11);
  EXPECT_EQ(s.transport, "auto");
}

TEST_F(ParamsTest, ConfigNotFromTheInitializerIsRejected) {
  mclConfig_t config = MCL_CONFIG_INITIALIZER;
  config.magic = 0;
  expectInvalid([&] { loadSettings(&config); }, "MCL_CONFIG_INITIALIZER");
  config = MCL_CONFIG_INITIALIZER;
  config.size = offsetof(mclConfig_t, commName);
  expectInvalid([&] { loadSettings(&config); }, "config->size");
}

TEST_F(ParamsTest, ConfigFromAnOlderHeaderIsReadUpToItsSize) {
  // A header from before `algorithms`: the field is not there to read.
  mclConfig_t config = MCL_CONFIG_INITIALIZER;
  config.size = offsetof(mclConfig_t, algorithms);
  config.algorithms = "no such algorithm";
  EXPECT_EQ(loadSettings(&config).algoSpec, "");
  config.size = sizeof(mclConfig_t);
  config.algorithms = "allreduce:tree";
  EXPECT_EQ(loadSettings(&config).forced[size_t(Collective::AllReduce)],
            Algorithm::Tree);
  config.algorithms = "allreduce:nope";
  expectInvalid([&] { loadSettings(&config); }, "\"nope\"");
}

TEST_F(ParamsTest, BlockingComesFromTheConfigElseTheEnvironment) {
  mclConfig_t config = MCL_CONFIG_INITIALIZER;
  EXPECT_TRUE(loadSettings(&config).blocking);
  EXPECT_TRUE(loadSettings(nullptr).blocking);
  config.blocking = 0;
  EXPECT_FALSE(loadSettings(&config).blocking);
  setenv("MCL_COMM_BLOCKING", "0", 1);
  EXPECT_FALSE(loadSettings(nullptr).blocking);
  config.blocking = 1;  // the config wins
  EXPECT_TRUE(loadSettings(&config).blocking);
  // A header from before `blocking`: the field is not there to read.
  config.size = offsetof(mclConfig_t, blocking);
  config.blocking = 7;
  EXPECT_FALSE(loadSettings(&config).blocking);
  unsetenv("MCL_COMM_BLOCKING");
  config.size = sizeof(mclConfig_t);
  expectInvalid([&] { loadSettings(&config); }, "config->blocking 7");
  setenv("MCL_COMM_BLOCKING", "2", 1);
  expectInvalid([&] { loadSettings(nullptr); }, "MCL_COMM_BLOCKING");
  unsetenv("MCL_COMM_BLOCKING");
}

TEST_F(ParamsTest, TimeoutOutOfRangeIsRejected) {
  mclConfig_t config = MCL_CONFIG_INITIALIZER;
  for (int bad : {0, -1, 24 * 3600 + 1}) {
    SCOPED_TRACE(bad);
    config.timeoutSeconds = bad;
    expectInvalid([&] { loadSettings(&config); }, "timeoutSeconds");
  }
  config.timeoutSeconds = 24 * 3600;
  EXPECT_EQ(loadSettings(&config).timeoutSeconds, 24 * 3600);
  set("MCL_TIMEOUT", "0");
  expectInvalid([] { loadSettings(nullptr); }, "MCL_TIMEOUT");
  expectInvalid([] { timeoutFromEnvironment(); }, "MCL_TIMEOUT");
}

TEST_F(ParamsTest, UnknownTransportsAreRejected) {
  mclConfig_t config = MCL_CONFIG_INITIALIZER;
  config.transport = "tcp";
  EXPECT_EQ(loadSettings(&config).transport, "tcp");
  config.transport = "rdma";
  EXPECT_EQ(loadSettings(&config).transport, "rdma");
  config.transport = "bogus";
  expectInvalid([&] { loadSettings(&config); }, "'bogus' is unknown");
  set("MCL_TRANSPORT", "infiniband");
  expectInvalid([] { loadSettings(nullptr); }, "'infiniband'");
}

transport::rdma::RdmaOptions rdmaOptions() {
  return transport::rdma::loadRdmaOptions(environmentParams());
}

transport::shm::ShmOptions shmOptions() {
  return transport::shm::loadShmOptions(environmentParams());
}

TEST_F(ParamsTest, RdmaSettingsAreChecked) {
  set("MCL_RDMA_PROVIDER", "magic");
  expectInvalid([] { rdmaOptions(); }, "MCL_RDMA_PROVIDER=magic");
  set("MCL_RDMA_PROVIDER", "emu");
  expectInvalid([] { rdmaOptions(); }, "needs MCL_EMU_FABRIC");
  set("MCL_EMU_FABRIC", "/nonexistent/fabric.json");
  expectInvalid([] { rdmaOptions(); }, "MCL_EMU_FABRIC=/nonexistent");
  set("MCL_EMU_FABRIC",
      (mcl::testing::fixtureDir() + "/rdma/pair.json").c_str());
  set("MCL_RDMA_QP", "ud");
  expectInvalid([] { rdmaOptions(); }, "MCL_RDMA_QP=ud");
  set("MCL_RDMA_QP", "rc");
  set("MCL_RDMA_DEPTH", "2");
  expectInvalid([] { rdmaOptions(); }, "MCL_RDMA_DEPTH");
  set("MCL_RDMA_DEPTH", "16");
  transport::rdma::RdmaOptions r = rdmaOptions();
  EXPECT_EQ(r.provider.provider, "emu");
  EXPECT_EQ(r.qpType, transport::rdma::QpType::RC);
  EXPECT_EQ(r.shape.depth, 16);
  EXPECT_EQ(r.provider.emuCabling.size(), 2u);  // the pair's two Macs
}

TEST_F(ParamsTest, ShmRingSizesAreChecked) {
  set("MCL_SHM_SLOT_BYTES", "100");
  expectInvalid([] { shmOptions(); }, "multiple of 64");
  set("MCL_SHM_SLOT_BYTES", "32");
  expectInvalid([] { shmOptions(); }, "MCL_SHM_SLOT_BYTES");
  set("MCL_SHM_SLOT_BYTES", "192");
  EXPECT_EQ(shmOptions().slotBytes, 192u);
  unsetenv("MCL_SHM_SLOT_BYTES");
  set("MCL_SHM_SLOTS", "1");
  expectInvalid([] { shmOptions(); }, "MCL_SHM_SLOTS");
}

TEST_F(ParamsTest, ShmRingStoresAreNamed) {
  EXPECT_EQ(shmOptions().ringStores, transport::shm::RingStores::Auto);
  set("MCL_SHM_RING_STORES", "stream");
  EXPECT_EQ(shmOptions().ringStores, transport::shm::RingStores::Streaming);
  set("MCL_SHM_RING_STORES", "fastest");
  expectInvalid([] { shmOptions(); }, "MCL_SHM_RING_STORES");
}

TEST_F(ParamsTest, WaitBudgetsAreValidatedUpFront) {
  set("MCL_SPIN_US", "fast");
  expectInvalid([] { loadSettings(nullptr); }, "MCL_SPIN_US");
  unsetenv("MCL_SPIN_US");
  set("MCL_YIELD_US", "-1");
  expectInvalid([] { loadSettings(nullptr); }, "MCL_YIELD_US");
}

TEST_F(ParamsTest, AutoWaitBudgetsShrinkWhenOversubscribed) {
  CommSettings s = loadSettings(nullptr);
  WaitPolicy alone = waitPolicyFor(s, 1);
  WaitPolicy crowded = waitPolicyFor(s, 1 << 20);  // more ranks than cores
  EXPECT_GT(alone.spinNs, 0);
  EXPECT_LT(crowded.spinNs, alone.spinNs);
  EXPECT_GT(crowded.yieldNs, 0);
}

}  // namespace
}  // namespace mcl
