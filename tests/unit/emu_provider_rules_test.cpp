// The emulated provider refuses what Apple's provider is not known to take
// (inline data, registrations off a page boundary, RC, a path MTU other than
// 1024, frames over 4096 bytes before macOS 26.3), and mcl's defaults never
// trip any of it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "emu_rdma_options.h"
#include "platform/page_buffer.h"
#include "transports/rdma/emu_provider.h"
#include "transports/rdma/provider.h"

namespace mcl::transport::rdma {
namespace {

std::string uniqueNamespace(const char* what) {
  return std::string(what) + std::to_string(getpid());
}

struct OpenedDevice {
  std::unique_ptr<Provider> provider;
  std::unique_ptr<DeviceContext> context;
  std::unique_ptr<CompletionQueue> cq;
};

OpenedDevice openMac0(const ProviderOptions& options) {
  OpenedDevice d;
  d.provider = openProvider(options);
  d.context = d.provider->open(d.provider->devices().front().name);
  d.cq = d.context->createCompletionQueue(64);
  return d;
}

// The refusal's text, or "" when the call went through.
template <typename F>
std::string refusal(F&& call) {
  try {
    call();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclSystemError) << e.what();
    return e.what();
  }
  return "";
}

TEST(EmuProviderRules, RefusesInlineDataTheWayAProviderWould) {
  OpenedDevice d =
      openMac0(emuOptions("pair", 0, uniqueNamespace("in")).provider);
  QpOptions o;
  o.inlineBytes = 64;
  std::string why = refusal([&] { d.context->createQueuePair(*d.cq, o); });
  EXPECT_NE(why.find("inline data"), std::string::npos) << why;
  EXPECT_NE(why.find("errno"), std::string::npos) << why;
  o.inlineBytes = 0;
  EXPECT_EQ(refusal([&] { d.context->createQueuePair(*d.cq, o); }), "");
}

TEST(EmuProviderRules, RefusesMemoryOffAPageBoundary) {
  OpenedDevice d =
      openMac0(emuOptions("pair", 0, uniqueNamespace("al")).provider);
  platform::PageBuffer buffer(3 * platform::pageSize());
  std::string why =
      refusal([&] { d.context->registerMemory(buffer.data() + 64, 4096); });
  EXPECT_NE(why.find("page boundary"), std::string::npos) << why;
  EXPECT_EQ(refusal([&] {
              d.context->registerMemory(buffer.data(), buffer.pagedSize());
            }),
            "");
}

TEST(EmuProviderRules, MakesUcOnlyUnlessATestAsksForRc) {
  ProviderOptions options =
      emuOptions("pair", 0, uniqueNamespace("rc")).provider;
  QpOptions o;
  o.type = QpType::RC;
  {
    OpenedDevice d = openMac0(options);
    EXPECT_FALSE(d.context->info().rcSupported);
    std::string why = refusal([&] { d.context->createQueuePair(*d.cq, o); });
    EXPECT_NE(why.find("RC queue pairs"), std::string::npos) << why;
    EXPECT_NE(why.find("errno 102"), std::string::npos) << why;
  }
  options.emuRc = true;
  OpenedDevice d = openMac0(options);
  EXPECT_TRUE(d.context->info().rcSupported);
  EXPECT_EQ(refusal([&] { d.context->createQueuePair(*d.cq, o); }), "");
}

TEST(EmuProviderRules, RefusesLargeFramesOnMacos262) {
  ProviderOptions options =
      emuOptions("pair", 0, uniqueNamespace("fr")).provider;
  QpOptions o;
  o.maxMessageBytes = 8192;
  {
    OpenedDevice d = openMac0(options);  // MCL_EMU_MACOS defaults to 26.2
    EXPECT_EQ(d.provider->frameLimit().maxBytes, 4096u);
    std::string why = refusal([&] { d.context->createQueuePair(*d.cq, o); });
    EXPECT_NE(why.find("macOS 26.2"), std::string::npos) << why;
    o.maxMessageBytes = 4096;
    EXPECT_EQ(refusal([&] { d.context->createQueuePair(*d.cq, o); }), "");
  }
  options.emuMacos = "26.3";
  OpenedDevice d = openMac0(options);
  EXPECT_EQ(d.provider->frameLimit().maxBytes, 0u);
  o.maxMessageBytes = 8192;
  EXPECT_EQ(refusal([&] { d.context->createQueuePair(*d.cq, o); }), "");
}

TEST(EmuProviderRules, RefusesAPathMtuOtherThan1024) {
  OpenedDevice d =
      openMac0(emuOptions("pair", 0, uniqueNamespace("mtu")).provider);
  std::unique_ptr<QueuePair> qp = d.context->createQueuePair(*d.cq, {});
  QpAddress remote = qp->address();
  EXPECT_EQ(remote.mtu, kEmuPathMtu);
  remote.mtu = 4096;
  std::string why = refusal([&] { qp->connect(remote); });
  EXPECT_NE(why.find("path MTU 4096"), std::string::npos) << why;
}

// MCL_RDMA_FRAME_BYTES over 4096 on 26.2 fails before any queue pair,
// naming the variable and the release.
TEST(EmuProviderRules, LargeFramesSettingIsRefusedNamingTheOsVersion) {
  RdmaOptions options = emuOptions("pair", 0, uniqueNamespace("fs"));
  options.shape.frameBytes = 8192;
  try {
    RdmaWires wires(0, options);
    FAIL() << "8192-byte frames accepted on macOS 26.2";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("MCL_RDMA_FRAME_BYTES=8192"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("macOS 26.2"), std::string::npos)
        << e.what();
  }
  options.provider.emuMacos = "26.3";
  EXPECT_NO_THROW(RdmaWires(0, options));
}

// Every wire mcl makes with its defaults (and with MCL_RDMA_INLINE=1, which
// the provider refuses, so mcl goes on without inline data) passes the
// rules; data crosses.
TEST(EmuProviderRules, DefaultsNeverTripThem) {
  for (bool inlineSends : {false, true}) {
    const std::string ns = uniqueNamespace(inlineSends ? "di" : "dd");
    RdmaOptions o0 = emuOptions("pair2", 0, ns);
    RdmaOptions o1 = emuOptions("pair2", 1, ns);
    o0.inlineSends = o1.inlineSends = inlineSends;
    RdmaWires mac0(0, o0);
    RdmaWires mac1(1, o1);
    mac0.createWires(mac0.emulatedPlan({1}, {0, 1}));
    mac1.createWires(mac1.emulatedPlan({0}, {0, 1}));
    std::vector<std::vector<uint8_t>> all = {mac0.addresses(),
                                             mac1.addresses()};
    mac0.connectWires(all);
    mac1.connectWires(all);
    std::unique_ptr<Connection> a = mac0.connect(1, 0);
    std::unique_ptr<Connection> b = mac1.connect(0, 0);
    auto slot = a->acquireSend(100);
    ASSERT_FALSE(slot.empty());
    slot[0] = std::byte{42};
    a->commitSend(1);
    std::span<const std::byte> in;
    for (int spins = 0; in.empty() && spins < 1'000'000; ++spins) {
      a->progress();
      b->progress();
      in = b->peekRecv();
    }
    ASSERT_EQ(in.size(), 1u);
    EXPECT_EQ(in[0], std::byte{42});
    b->releaseRecv(1);
  }
}

}  // namespace
}  // namespace mcl::transport::rdma
