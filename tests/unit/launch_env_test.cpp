// mclCommInitFromEnv's reading of the environment: rank and size from each
// launcher's variables, the rendezvous from each source, and clear errors.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ios>
#include <map>
#include <string>

#include "base/auth.h"
#include "base/error.h"
#include "core/bootstrap/launch_env.h"

namespace mcl {
namespace {

const char* const kAll[] = {"MCL_RANK",
                            "MCL_WORLD_SIZE",
                            "MCL_ROOT",
                            "MCL_SECRET",
                            "MCL_UNIQUE_ID",
                            "OMPI_COMM_WORLD_RANK",
                            "OMPI_COMM_WORLD_SIZE",
                            "OMPI_MCA_ess_base_jobid",
                            "PMI_RANK",
                            "PMI_SIZE",
                            "SLURM_PROCID",
                            "SLURM_NTASKS",
                            "SLURM_JOB_ID",
                            "RANK",
                            "WORLD_SIZE",
                            "MASTER_ADDR",
                            "MASTER_PORT",
                            "MLX_RANK",
                            "MLX_HOSTFILE",
                            "MLX_IBV_DEVICES",
                            "MLX_WORLD_SIZE",
                            "MLX_JACCL_COORDINATOR",
                            "TORCHELASTIC_RUN_ID",
                            "PMIX_NAMESPACE",
                            "SLURM_STEP_ID",
                            "OMPI_MCA_orte_precondition_transports",
                            "XDG_RUNTIME_DIR"};

// Each test starts from an environment with no launcher variable and
// restores the original afterwards.
class LaunchEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kAll) {
      if (const char* v = getenv(name)) saved_[name] = v;
      unsetenv(name);
    }
    // Rank 0 of a job without a secret writes one: into a directory of
    // this test's, not the user's.
    char dir[] = "/tmp/mcl-launch-env-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    runtimeDir_ = dir;
    set("XDG_RUNTIME_DIR", runtimeDir_);
  }
  void TearDown() override {
    std::filesystem::remove_all(runtimeDir_);
    for (const char* name : kAll) unsetenv(name);
    for (const auto& [name, value] : saved_)
      setenv(name.c_str(), value.c_str(), 1);
  }
  std::string runtimeDir_;
  static void set(const char* name, const std::string& value) {
    setenv(name, value.c_str(), 1);
  }
  static void expectInvalid(const char* mention) {
    try {
      readLaunchEnv();
      ADD_FAILURE() << "accepted; expected an error mentioning " << mention;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), mclInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(mention), std::string::npos)
          << e.what();
    }
  }

 private:
  std::map<std::string, std::string> saved_;
};

const std::string kSecret = "00112233445566778899aabbccddeeff";

TEST_F(LaunchEnvTest, McLVariablesWithRootAndSecret) {
  set("MCL_RANK", "2");
  set("MCL_WORLD_SIZE", "4");
  set("MCL_ROOT", "10.0.0.7:29500");
  set("MCL_SECRET", kSecret);
  LaunchEnv e = readLaunchEnv();
  EXPECT_EQ(e.rank, 2);
  EXPECT_EQ(e.nranks, 4);
  EXPECT_EQ(e.id.root.toString(), "10.0.0.7:29500");
  EXPECT_TRUE(e.rankZeroListens);
  EXPECT_EQ(e.id.secret[0], 0x00);
  EXPECT_EQ(e.id.secret[15], 0xff);
}

TEST_F(LaunchEnvTest, UniqueIdStringNeedsNoListener) {
  set("MCL_RANK", "0");
  set("MCL_WORLD_SIZE", "2");
  set("MCL_UNIQUE_ID", "mcl1:127.0.0.1:4000,10.1.0.1:4000:" + kSecret);
  LaunchEnv e = readLaunchEnv();
  EXPECT_FALSE(e.rankZeroListens);
  EXPECT_EQ(e.id.allRoots().size(), 2u);
}

TEST_F(LaunchEnvTest, OpenMpiOnOneHostDerivesALoopbackPort) {
  set("OMPI_COMM_WORLD_RANK", "1");
  set("OMPI_COMM_WORLD_SIZE", "2");
  set("OMPI_MCA_ess_base_jobid", "123456");
  LaunchEnv a = readLaunchEnv();
  EXPECT_EQ(a.rank, 1);
  EXPECT_EQ(a.rankSource, "Open MPI");
  EXPECT_EQ(a.id.root.host(), "127.0.0.1");
  // Every rank of the job derives the same port and secret file; another
  // job gets others. Nothing public gives the secret itself: rank 1 has
  // none until it reads rank 0's file.
  LaunchEnv b = readLaunchEnv();
  EXPECT_EQ(a.id.root.port(), b.id.root.port());
  EXPECT_EQ(a.secretSource, SecretSource::SharedFile);
  EXPECT_EQ(a.secretFile, b.secretFile);
  EXPECT_EQ(a.id.secret, Secret{});
  set("OMPI_MCA_ess_base_jobid", "654321");
  LaunchEnv c = readLaunchEnv();
  EXPECT_NE(a.secretFile, c.secretFile);
}

// Without MCL_SECRET on one host, rank 0's secret is random, in a file only
// this user can read, and never the same twice for the same job.
TEST_F(LaunchEnvTest, SingleHostRankZeroMakesARandomSecretInAPrivateFile) {
  set("MCL_RANK", "0");
  set("MCL_WORLD_SIZE", "2");
  set("MCL_ROOT", "localhost:5000");
  LaunchEnv a = readLaunchEnv();
  ASSERT_EQ(a.secretSource, SecretSource::SharedFile);
  EXPECT_TRUE(a.id.root.isLoopback());
  EXPECT_EQ(a.secretFile.rfind(runtimeDir_ + "/", 0), 0u) << a.secretFile;
  struct stat st {};
  ASSERT_EQ(stat(a.secretFile.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_uid, geteuid());
  std::ifstream in(a.secretFile, std::ios::binary);
  Secret stored{};
  in.read(reinterpret_cast<char*>(stored.data()), stored.size());
  EXPECT_EQ(stored, a.id.secret);
  LaunchEnv again = readLaunchEnv();
  EXPECT_EQ(again.secretFile, a.secretFile);
  EXPECT_NE(again.id.secret, a.id.secret);
}

TEST_F(LaunchEnvTest, PmiAndSlurm) {
  set("PMI_RANK", "3");
  set("PMI_SIZE", "5");
  set("MCL_ROOT", "127.0.0.1:7000");
  LaunchEnv p = readLaunchEnv();
  EXPECT_EQ(p.rank, 3);
  EXPECT_EQ(p.rankSource, "PMI");
  unsetenv("PMI_RANK");
  unsetenv("PMI_SIZE");
  set("SLURM_PROCID", "0");
  set("SLURM_NTASKS", "8");
  LaunchEnv s = readLaunchEnv();
  EXPECT_EQ(s.nranks, 8);
  EXPECT_EQ(s.rankSource, "SLURM");
}

TEST_F(LaunchEnvTest, TorchrunUsesTheNextPortAfterMasterPort) {
  set("RANK", "1");
  set("WORLD_SIZE", "2");
  set("MASTER_ADDR", "127.0.0.1");
  set("MASTER_PORT", "29500");
  LaunchEnv e = readLaunchEnv();
  EXPECT_EQ(e.rankSource, "torchrun");
  EXPECT_EQ(e.id.root.port(), 29501);
}

TEST_F(LaunchEnvTest, MasterPortsThatLeaveNoNextPortAreRefused) {
  set("RANK", "1");
  set("WORLD_SIZE", "2");
  set("MASTER_ADDR", "127.0.0.1");
  // The last port has no next one; the largest long once overflowed the
  // addition instead.
  for (const char* port : {"65535", "9223372036854775807", "0", "-1"}) {
    SCOPED_TRACE(port);
    set("MASTER_PORT", port);
    expectInvalid("has no valid port");
  }
}

TEST_F(LaunchEnvTest, MlxLaunchCountsTheHostfile) {
  std::string path = ::testing::TempDir() + "mcl_hostfile.json";
  {
    std::ofstream f(path);
    f << R"([["10.0.0.1:5000"], ["10.0.0.2:5000"], ["10.0.0.3:5000"]])";
  }
  set("MLX_RANK", "2");
  set("MLX_HOSTFILE", path);
  set("MLX_JACCL_COORDINATOR", "10.0.0.1:32323");
  set("MCL_SECRET", kSecret);
  LaunchEnv e = readLaunchEnv();
  EXPECT_EQ(e.nranks, 3);
  EXPECT_EQ(e.rank, 2);
  EXPECT_EQ(e.id.root.toString(), "10.0.0.1:32324");
  std::remove(path.c_str());
}

// mlx.launch --backend jaccl sets no hostfile: its device matrix (one row
// per rank) gives the size, its coordinator the rendezvous.
TEST_F(LaunchEnvTest, MlxJacclLaunchCountsTheDeviceMatrix) {
  std::string path = ::testing::TempDir() + "mcl_ibv_devices.json";
  {
    std::ofstream f(path);
    f << R"([[null, "rdma_en3", ["rdma_en4", "rdma_en5"]],
            ["rdma_en3", null, "rdma_en4"],
            [["rdma_en4", "rdma_en5"], "rdma_en3", null]])";
  }
  set("MLX_RANK", "1");
  set("MLX_IBV_DEVICES", path);
  set("MLX_JACCL_COORDINATOR", "10.0.0.1:32323");
  set("MCL_SECRET", kSecret);
  LaunchEnv e = readLaunchEnv();
  EXPECT_EQ(e.nranks, 3);
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.id.root.toString(), "10.0.0.1:32324");
  set("MLX_IBV_DEVICES", path + ".missing");
  expectInvalid("MLX_IBV_DEVICES");
  std::remove(path.c_str());
}

// A rendezvous other hosts can reach needs a real secret: one derived from
// public values would let anyone who reaches the port join.
TEST_F(LaunchEnvTest, ReachableRootWithoutSecretIsRefused) {
  set("MCL_RANK", "0");
  set("MCL_WORLD_SIZE", "2");
  set("MCL_ROOT", "10.0.0.1:5000");
  expectInvalid("set MCL_SECRET");
  set("MCL_ROOT", "127.0.0.1:5000");
  EXPECT_NO_THROW(readLaunchEnv());
}

// Open MPI's transport key is private only where its mpirun (1.x-4.x) put
// it, beside OMPI_MCA_ess_base_jobid. Without mpirun, those versions'
// MPI_Init writes the job's public id into it, so alone it serves nothing.
TEST_F(LaunchEnvTest, OpenMpiKeyServesOnlyUnderItsMpirun) {
  set("MCL_RANK", "0");
  set("MCL_WORLD_SIZE", "2");
  set("MCL_ROOT", "10.0.0.1:5000");
  set("OMPI_MCA_orte_precondition_transports",
      "00000001-00000000-00000002-00000000");
  expectInvalid("set MCL_SECRET");
  set("OMPI_MCA_ess_base_jobid", "2031616");
  LaunchEnv a = readLaunchEnv();
  EXPECT_EQ(a.secretSource, SecretSource::Launcher);
  set("OMPI_MCA_orte_precondition_transports",
      "9a8b7c6d5e4f3a2b-1c2d3e4f5a6b7c8d");
  LaunchEnv b = readLaunchEnv();
  EXPECT_NE(a.id.secret, b.id.secret);
  EXPECT_NE(a.id.secret, Secret{});
}

// Open MPI 5's mpirun gives no ess_base_jobid; its PMIx namespace names the
// job, so one host still needs no settings.
TEST_F(LaunchEnvTest, OpenMpi5OnOneHostUsesThePmixNamespace) {
  set("OMPI_COMM_WORLD_RANK", "0");
  set("OMPI_COMM_WORLD_SIZE", "2");
  set("PMIX_NAMESPACE", "prterun-mac1-81234@1");
  LaunchEnv a = readLaunchEnv();
  EXPECT_TRUE(a.id.root.isLoopback());
  EXPECT_EQ(a.secretSource, SecretSource::SharedFile);
  set("PMIX_NAMESPACE", "prterun-mac1-81234@2");
  LaunchEnv b = readLaunchEnv();
  EXPECT_NE(a.secretFile, b.secretFile);
}

TEST_F(LaunchEnvTest, BadValuesNameTheVariable) {
  expectInvalid("MCL_RANK and MCL_WORLD_SIZE");
  set("MCL_RANK", "2");
  set("MCL_WORLD_SIZE", "2");
  expectInvalid("MCL_RANK='2'");
  set("MCL_RANK", "0");
  expectInvalid("MCL_ROOT");
  set("MCL_ROOT", "10.0.0.1");
  expectInvalid("MCL_ROOT='10.0.0.1'");
  set("MCL_ROOT", "10.0.0.1:70000");
  expectInvalid("no valid port");
  set("MCL_ROOT", "no-such-host.invalid:5000");
  expectInvalid("does not resolve");
  set("MCL_ROOT", "10.0.0.1:5000");
  set("MCL_SECRET", "xyz");
  expectInvalid("secret");
}

}  // namespace
}  // namespace mcl
