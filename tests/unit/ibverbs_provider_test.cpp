// The ibverbs provider against the system's verbs library. Machines without
// RDMA devices (CI) still check loading, listing and the error texts.
// MCL_HAVE_VERBS is private to the library's objects, hence __has_include.
#if __has_include(<infiniband/verbs.h>)

#include "transports/rdma/ibverbs_provider.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <system_error>

#include "base/error.h"

namespace mcl::transport::rdma {
namespace {

const char* defaultLibrary() {
#ifdef __APPLE__
  return "librdma.dylib";
#else
  return "libibverbs.so.1";
#endif
}

// Whether the system library is there at all, asked independently of the
// provider so that a loading bug fails instead of skipping.
bool systemLibraryPresent() {
  void* h = dlopen(defaultLibrary(), RTLD_NOW | RTLD_LOCAL);
  if (h) dlclose(h);
  return h != nullptr;
}

bool machineHasRdmaDevices() {
  std::error_code ec;
  return !std::filesystem::is_empty("/sys/class/infiniband", ec) && !ec;
}

std::string messageOf(const std::function<void()>& f, mclResult_t& code) {
  try {
    f();
  } catch (const Error& e) {
    code = e.code();
    return e.what();
  }
  code = mclSuccess;
  return "";
}

TEST(IbverbsProvider, LoadsTheSystemLibrary) {
  if (!systemLibraryPresent())
    GTEST_SKIP() << defaultLibrary() << " is not installed";
  auto provider = openIbverbsProvider("");
  ASSERT_NE(provider, nullptr);
  EXPECT_STREQ(provider->name(), "ibverbs");
  EXPECT_FALSE(provider->emulated());
  auto devices = provider->devices();
  if (machineHasRdmaDevices()) {
    for (const auto& d : devices) EXPECT_FALSE(d.name.empty());
  } else {
    EXPECT_TRUE(devices.empty());
  }
}

TEST(IbverbsProvider, LoadsAndUnloadsRepeatedly) {
  if (!systemLibraryPresent())
    GTEST_SKIP() << defaultLibrary() << " is not installed";
  for (int i = 0; i < 3; ++i) {
    auto provider = openIbverbsProvider(defaultLibrary());
    provider->devices();
  }
}

TEST(IbverbsProvider, UnknownDeviceIsAnInvalidArgumentNamingIt) {
  if (!systemLibraryPresent())
    GTEST_SKIP() << defaultLibrary() << " is not installed";
  auto provider = openIbverbsProvider("");
  mclResult_t code = mclSuccess;
  std::string msg = messageOf([&] { provider->open("rdma_nosuch9"); }, code);
  EXPECT_EQ(code, mclInvalidArgument) << msg;
  EXPECT_NE(msg.find("rdma_nosuch9"), std::string::npos) << msg;
  if (!machineHasRdmaDevices()) {
    EXPECT_NE(msg.find("there are none"), std::string::npos) << msg;
  }
}

TEST(IbverbsProvider, MissingLibraryIsASystemErrorSayingHowToGetRdma) {
  mclResult_t code = mclSuccess;
  std::string msg = messageOf(
      [] { openIbverbsProvider("/nonexistent/libnothing.so"); }, code);
  EXPECT_EQ(code, mclSystemError) << msg;
  EXPECT_NE(msg.find("cannot load the RDMA library /nonexistent/libnothing.so"),
            std::string::npos)
      << msg;
#ifdef __APPLE__
  EXPECT_NE(msg.find("rdma_ctl enable"), std::string::npos) << msg;
  EXPECT_NE(msg.find("macOS 26.2"), std::string::npos) << msg;
#else
  EXPECT_NE(msg.find("libibverbs1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rdma-core"), std::string::npos) << msg;
#endif
}

#ifdef __linux__
// A library that loads but is not a verbs library: the error names the
// first verb it lacks.
TEST(IbverbsProvider, LibraryWithoutVerbsNamesTheMissingSymbol) {
  void* h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  if (!h) GTEST_SKIP() << "libm.so.6 is not loadable";
  dlclose(h);
  mclResult_t code = mclSuccess;
  std::string msg = messageOf([] { openIbverbsProvider("libm.so.6"); }, code);
  EXPECT_EQ(code, mclSystemError) << msg;
  EXPECT_NE(msg.find("libm.so.6 lacks the symbol ibv_get_device_list"),
            std::string::npos)
      << msg;
}
#endif

}  // namespace
}  // namespace mcl::transport::rdma

#endif  // __has_include(<infiniband/verbs.h>)
