// The emulated provider refuses what Apple's provider is not known to take
// (inline data, registrations off a page boundary, RC, a path MTU other than
// 1024, frames over 4096 bytes before macOS 26.3, a 33rd posted receive),
// delivers a SEND frame by frame into its receives, and mcl's defaults
// never trip any of it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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
#include "transports/rdma/rdma_connection.h"

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

// Two connected queue pairs, Mac 0's rdma_en2 to Mac 1's rdma_en3, each
// with registered frames of `frameBytes`.
struct ConnectedPair {
  OpenedDevice mac0;
  OpenedDevice mac1;
  std::unique_ptr<QueuePair> qp0;
  std::unique_ptr<QueuePair> qp1;
  platform::PageBuffer frames0;
  platform::PageBuffer frames1;
  std::unique_ptr<MemoryRegion> mr0;
  std::unique_ptr<MemoryRegion> mr1;

  ConnectedPair(const std::string& ns, const std::string& macos,
                uint32_t frameBytes, int depth)
      : frames0(size_t(depth) * frameBytes),
        frames1(size_t(depth) * frameBytes) {
    ProviderOptions o0 = emuOptions("pair", 0, ns).provider;
    ProviderOptions o1 = emuOptions("pair", 1, ns).provider;
    o0.emuMacos = o1.emuMacos = macos;
    mac0 = openMac0(o0);
    mac1 = openMac0(o1);
    QpOptions q;
    q.maxMessageBytes = frameBytes;
    q.sendDepth = q.recvDepth = depth;
    qp0 = mac0.context->createQueuePair(*mac0.cq, q);
    qp1 = mac1.context->createQueuePair(*mac1.cq, q);
    qp0->connect(qp1->address());
    qp1->connect(qp0->address());
    mr0 = mac0.context->registerMemory(frames0.data(), frames0.pagedSize());
    mr1 = mac1.context->registerMemory(frames1.data(), frames1.pagedSize());
  }
  // Mac 1's receive completions, polling both ends until `count` came.
  std::vector<Completion> receives(size_t count) {
    std::vector<Completion> got;
    Completion c[8];
    for (int spins = 0; got.size() < count && spins < 200'000; ++spins) {
      mac0.cq->poll(c, 8);
      int n = mac1.cq->poll(c, 8);
      for (int i = 0; i < n; ++i)
        if (c[i].recv) got.push_back(c[i]);
    }
    return got;
  }
};

// hellas-ai/thunderbolt-ibverbs saw the 33rd posted receive fail with
// ENOMEM on a Mac: the emulation refuses it the same way.
TEST(EmuProviderRules, TheThirtyThirdPostedReceiveIsOutOfMemory) {
  ConnectedPair p(uniqueNamespace("rl"), "26.2", 4096, 64);
  for (uint32_t slot = 0; slot < 32; ++slot)
    EXPECT_EQ(refusal([&] {
                p.qp1->postRecv(slot, *p.mr1, p.frames1.data() + slot * 4096,
                                4096);
              }),
              "");
  std::string why = refusal(
      [&] { p.qp1->postRecv(32, *p.mr1, p.frames1.data() + 32 * 4096, 4096); });
  EXPECT_NE(why.find("ibv_post_recv"), std::string::npos) << why;
  EXPECT_NE(why.find("errno " + std::to_string(ENOMEM)), std::string::npos)
      << why;
  EXPECT_NE(why.find("more than 32 receives"), std::string::npos) << why;
}

// mcl refuses the setting before any queue pair, naming it and the limit.
TEST(EmuProviderRules, ADepthBeyondThePostedReceiveLimitIsRefusedAtInit) {
  RdmaOptions options = emuOptions("pair", 0, uniqueNamespace("dl"));
  options.shape.depth = 64;
  try {
    RdmaWires wires(0, options);
    wires.probePorts();
    FAIL() << "MCL_RDMA_DEPTH=64 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclInvalidArgument);
    const std::string what = e.what();
    EXPECT_NE(what.find("MCL_RDMA_DEPTH=64"), std::string::npos) << what;
    EXPECT_NE(what.find("at most 32 receives posted"), std::string::npos)
        << what;
  }
  options.shape.depth = 32;
  RdmaWires wires(0, options);
  EXPECT_NO_THROW(wires.probePorts());
}

// A SEND lands 4 KiB frame by frame: one that covers fewer frames than its
// 16 KiB receive leaves the receive open, and the next SEND's frames fill
// it (what Apple's rule forbids); padded to as many frames, each lands in
// its own receive.
TEST(EmuProviderRules, ASendCoveringFewerFramesThanItsReceiveMisplacesData) {
  constexpr uint32_t kFrame = 16384;
  ConnectedPair p(uniqueNamespace("fr16"), "26.3", kFrame, 8);
  for (uint32_t slot = 0; slot < 4; ++slot)
    p.qp1->postRecv(slot, *p.mr1, p.frames1.data() + slot * kFrame, kFrame);
  std::byte* out = p.frames0.data();
  std::memset(out, 0xa1, kFrame);
  std::memset(out + kFrame, 0xb2, kFrame);
  p.qp0->postSend(1, *p.mr0, out, 64);               // one frame
  p.qp0->postSend(2, *p.mr0, out + kFrame, kFrame);  // four frames
  std::vector<Completion> got = p.receives(2);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].bytes, 64u + 3 * 4096);  // both SENDs in one receive
  EXPECT_EQ(p.frames1.data()[0], std::byte{0xa1});
  EXPECT_EQ(p.frames1.data()[4096], std::byte{0xb2});
  // The second SEND's last frame spilled into the next receive, which now
  // waits for three more frames.
  EXPECT_EQ(p.frames1.data()[kFrame], std::byte{0xb2});

  ConnectedPair padded(uniqueNamespace("fp16"), "26.3", kFrame, 8);
  for (uint32_t slot = 0; slot < 4; ++slot)
    padded.qp1->postRecv(slot, *padded.mr1,
                         padded.frames1.data() + slot * kFrame, kFrame);
  EXPECT_EQ(sendLength(64, kFrame), 3 * 4096u + 64);
  std::byte* frames = padded.frames0.data();
  std::memcpy(frames, out, 2 * kFrame);
  padded.qp0->postSend(1, *padded.mr0, frames, sendLength(64, kFrame));
  padded.qp0->postSend(2, *padded.mr0, frames + kFrame,
                       sendLength(kFrame, kFrame));
  got = padded.receives(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].bytes, sendLength(64, kFrame));
  EXPECT_EQ(got[1].bytes, kFrame);
  EXPECT_EQ(padded.frames1.data()[kFrame], std::byte{0xb2});
}

// The padding at every frame size mcl allows: as many 4 KiB frames as the
// receive, never more bytes than the frame.
TEST(EmuProviderRules, EverySendCoversAsManyFramesAsItsReceive) {
  auto frames = [](uint32_t bytes) { return (bytes + 4095) / 4096; };
  for (uint32_t frameBytes = 128; frameBytes <= (1u << 20); frameBytes += 64)
    for (uint32_t bytes : {64u, 65u, 128u, 4096u, 4097u, frameBytes}) {
      if (bytes > frameBytes) continue;
      const uint32_t length = sendLength(bytes, frameBytes);
      ASSERT_EQ(frames(length), frames(frameBytes))
          << bytes << " of " << frameBytes;
      ASSERT_GE(length, bytes);
      ASSERT_LE(length, frameBytes);
    }
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
