// What an OS error says beyond errno: a bind that fails names the address
// and port and why (a port held, an address this host does not have, a
// privileged port); a limit that runs out names the limit and how to raise
// it. Each hint is asserted here as text; the held port and the missing
// address are real binds.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cerrno>
#include <string>
#include <system_error>

#include "platform/process_limits.h"
#include "platform/socket.h"

namespace mcl::platform {
namespace {

std::string bindError(const SocketAddress& address) {
  try {
    listenTcp(address, 4);
  } catch (const std::system_error& e) {
    return e.what();
  }
  return "";
}

TEST(OsErrorHints, AHeldPortNamesItAndHowToFindTheHolder) {
  Socket held = listenTcp(SocketAddress::fromNumeric("127.0.0.1", 0), 4);
  const int port = localAddress(held.fd()).port();
  const std::string text =
      bindError(SocketAddress::fromNumeric("127.0.0.1", port));
  const std::string p = std::to_string(port);
  EXPECT_NE(text.find("bind to 127.0.0.1:" + p), std::string::npos) << text;
  EXPECT_NE(text.find("Address already in use"), std::string::npos) << text;
  EXPECT_NE(text.find("ss -ltnp 'sport = :" + p + "'"), std::string::npos)
      << text;
  EXPECT_NE(text.find("lsof -nP -iTCP:" + p), std::string::npos) << text;
}

TEST(OsErrorHints, AnAddressThisHostLacksIsNamed) {
  // TEST-NET-3: on no interface here.
  const std::string text =
      bindError(SocketAddress::fromNumeric("203.0.113.77", 0));
  EXPECT_NE(text.find("Cannot assign requested address"), std::string::npos)
      << text;
  EXPECT_NE(text.find("no interface of this host has the address "
                      "203.0.113.77"),
            std::string::npos)
      << text;
}

TEST(OsErrorHints, APrivilegedPortSaysSo) {
  const auto address = SocketAddress::fromNumeric("127.0.0.1", 80);
  EXPECT_EQ(bindHint(EACCES, address), " (ports below 1024 need root)");
  EXPECT_EQ(bindHint(EINVAL, address), "");
}

TEST(OsErrorHints, LimitsThatRunOutAreNamedWithTheirFix) {
  const ResourceLimit files = descriptorLimit();
  const std::string emfile = limitHint(EMFILE);
  EXPECT_NE(emfile.find("ulimit -n allows open"), std::string::npos);
  if (!files.unlimited) {
    EXPECT_NE(emfile.find("all " + std::to_string(files.soft) + " "),
              std::string::npos)
        << emfile;
  }
  EXPECT_NE(limitHint(ENFILE).find("fs.file-max"), std::string::npos);
  EXPECT_NE(limitHint(ENOMEM).find("ulimit -v"), std::string::npos);
  EXPECT_EQ(limitHint(ENOENT), "");
  EXPECT_GT(openDescriptorCount(), 2);
}

}  // namespace
}  // namespace mcl::platform
