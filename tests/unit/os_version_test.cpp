// Reading a macOS product version: the RDMA frame limit depends on it.
#include "platform/os_version.h"

#include <gtest/gtest.h>

namespace mcl::platform {
namespace {

TEST(OsVersion, ParsesProductVersions) {
  auto v = parseOsVersion("26.2");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 26);
  EXPECT_EQ(v->minor, 2);
  EXPECT_FALSE(v->atLeast(26, 3));
  EXPECT_TRUE(v->atLeast(26, 2));
  EXPECT_EQ(v->text(), "26.2");
  v = parseOsVersion("26.3.1");
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->atLeast(26, 3));
  EXPECT_EQ(v->text(), "26.3.1");
  EXPECT_TRUE(parseOsVersion("27.0")->atLeast(26, 3));
}

TEST(OsVersion, RefusesWhatIsNotAVersion) {
  for (const char* bad : {"", "26", "26.", ".2", "26.2.", "26.2.1.4", "x.y",
                          "26.2beta", "1234567.1"})
    EXPECT_FALSE(parseOsVersion(bad)) << bad;
}

TEST(OsVersion, IsUnknownOffMacos) {
#ifndef __APPLE__
  EXPECT_FALSE(macosVersion());
#else
  EXPECT_TRUE(macosVersion());
#endif
}

}  // namespace
}  // namespace mcl::platform
