// The secret a single-host job without MCL_SECRET shares through a file:
// random, readable by this user only, read only once rank 0's rendezvous
// is up, and refused when anyone else could have read or written it.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "base/auth.h"
#include "base/error.h"
#include "core/bootstrap/job_secret_file.h"
#include "platform/socket.h"

namespace mcl {
namespace {

using platform::Clock;

class JobSecretFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* v = getenv("XDG_RUNTIME_DIR")) saved_ = v;
    char dir[] = "/tmp/mcl-secret-test-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    setenv("XDG_RUNTIME_DIR", dir, 1);
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    if (saved_.empty())
      unsetenv("XDG_RUNTIME_DIR");
    else
      setenv("XDG_RUNTIME_DIR", saved_.c_str(), 1);
  }
  // A listener standing in for rank 0's rendezvous.
  static platform::Socket listener() {
    return platform::listenTcp(
        platform::SocketAddress::fromNumeric("127.0.0.1", 0), 8);
  }
  static platform::Deadline soon(int ms = 500) {
    return Clock::now() + std::chrono::milliseconds(ms);
  }
  std::string dir_;
  std::string saved_;
};

TEST_F(JobSecretFileTest, AnotherRankReadsWhatRankZeroMade) {
  platform::Socket root = listener();
  const auto address = platform::localAddress(root.fd());
  const std::string path = jobSecretPath(address, "job 7");
  EXPECT_EQ(path.rfind(dir_ + "/mcl-secret-", 0), 0u) << path;
  EXPECT_NE(path, jobSecretPath(address, "job 8"));
  const Secret made = createJobSecret(path);
  EXPECT_EQ(readJobSecret(path, address, soon()), made);
  removeJobSecret(path);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST_F(JobSecretFileTest, AFileOthersCanReadIsRefused) {
  platform::Socket root = listener();
  const auto address = platform::localAddress(root.fd());
  const std::string path = jobSecretPath(address, "");
  createJobSecret(path);
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  try {
    readJobSecret(path, address, soon());
    FAIL() << "a world-readable secret file was used";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclSystemError);
    EXPECT_NE(std::string(e.what()).find("not private"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("644"), std::string::npos) << e.what();
  }
}

TEST_F(JobSecretFileTest, AFileOfAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a file away";
  platform::Socket root = listener();
  const auto address = platform::localAddress(root.fd());
  const std::string path = jobSecretPath(address, "");
  createJobSecret(path);
  ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);
  try {
    readJobSecret(path, address, soon());
    FAIL() << "another user's secret file was used";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("uid 65534"), std::string::npos)
        << e.what();
  }
}

// A runtime directory others may enter is not used: the secret goes to a
// private one instead.
TEST_F(JobSecretFileTest, ADirectoryOthersCanEnterIsNotUsed) {
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  const auto address = platform::SocketAddress::fromNumeric("127.0.0.1", 9);
  const std::string path = jobSecretPath(address, "");
  EXPECT_NE(path.rfind(dir_ + "/", 0), 0u) << path;
  struct stat st {};
  const std::string parent = path.substr(0, path.rfind('/'));
  ASSERT_EQ(lstat(parent.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u) << parent;
  EXPECT_EQ(st.st_uid, geteuid());
}

// Until rank 0 listens, a leftover file of an earlier job is not taken; at
// the deadline the error says what was missing.
TEST_F(JobSecretFileTest, NothingIsReadBeforeTheRendezvousIsUp) {
  platform::Socket root = listener();
  const auto address = platform::localAddress(root.fd());
  root.close();  // nobody listens there now
  const std::string path = jobSecretPath(address, "");
  createJobSecret(path);  // an earlier job's
  try {
    readJobSecret(path, address, soon(300));
    FAIL() << "read a secret with no rendezvous up";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclTimeout);
    EXPECT_NE(std::string(e.what()).find("never came up"), std::string::npos)
        << e.what();
  }
}

TEST_F(JobSecretFileTest, AMissingFileNamesItAndMclSecret) {
  platform::Socket root = listener();
  const auto address = platform::localAddress(root.fd());
  const std::string path = jobSecretPath(address, "");
  try {
    readJobSecret(path, address, soon(300));
    FAIL() << "no file, yet a secret";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclTimeout);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("MCL_SECRET"), std::string::npos);
  }
}

}  // namespace
}  // namespace mcl
