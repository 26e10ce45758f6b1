// MCL_EMU_FAULTS: every form the docs give is read as written, a defect is
// refused naming the item, and the dice hit the frames asked for.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"
#include "transports/rdma/emu_faults.h"

namespace mcl::transport::rdma {
namespace {

const std::vector<std::vector<std::string>> kDevices = {
    {"rdma_en2", "rdma_en5"}, {"rdma_en3", "rdma_en6"}};

std::string refusal(const std::string& text) {
  try {
    parseEmuFaults(text, kDevices);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclInvalidArgument) << e.what();
    return e.what();
  }
  return "";
}

TEST(EmuFaults, ReadsEveryFormCommaSeparatedWithPortDown) {
  EmuFaults f = parseEmuFaults(
      "port_down:1:rdma_en3@300,drop:0.0001,dup:0.5:0:rdma_en2,"
      "delay:0.25:40,drop@7:1:rdma_en6;wc_error@3:0:rdma_en5",
      kDevices);
  ASSERT_EQ(f.ports.size(), 1u);
  EXPECT_EQ(f.ports[0].mac, 1);
  EXPECT_EQ(f.ports[0].device, "rdma_en3");
  EXPECT_EQ(f.ports[0].afterMs, 300);
  ASSERT_EQ(f.frames.size(), 5u);
  EXPECT_EQ(f.frames[0].kind, EmuFrameFaultKind::Drop);
  EXPECT_DOUBLE_EQ(f.frames[0].rate, 0.0001);
  EXPECT_EQ(f.frames[0].mac, -1);
  EXPECT_EQ(f.frames[1].kind, EmuFrameFaultKind::Duplicate);
  EXPECT_EQ(f.frames[1].mac, 0);
  EXPECT_EQ(f.frames[1].device, "rdma_en2");
  EXPECT_EQ(f.frames[2].kind, EmuFrameFaultKind::Delay);
  EXPECT_EQ(f.frames[2].delayUs, 40);
  EXPECT_EQ(f.frames[3].nth, 7u);
  EXPECT_EQ(f.frames[3].device, "rdma_en6");
  EXPECT_EQ(f.frames[4].kind, EmuFrameFaultKind::CompletionError);
  EXPECT_EQ(f.frames[4].nth, 3u);
}

TEST(EmuFaults, RefusesDefectsNamingTheItem) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {"drop", "needs a RATE"},
           {"drop:0", "RATE must be a number above 0"},
           {"drop:1.5", "RATE must be"},
           {"drop:often", "RATE must be"},
           {"dup:0.1:2:rdma_en2", "Mac 2 is not in the fabric"},
           {"dup:0.1:0:rdma_en9", "has no cabled device rdma_en9"},
           {"dup:0.1:0", "one cable is named as MAC:DEVICE"},
           {"delay:0.1", "delay needs the microseconds"},
           {"delay:0.1:-3", "US must be a whole number"},
           {"drop@0:0:rdma_en2", "N must be a whole number from 1"},
           {"drop@5", "names the end that sends it"},
           {"wc_error:0.1", "unknown fault"},
           {"lose:0.1", "unknown fault"},
           {"port_down:0:rdma_en2", "should read port_down:MAC:DEVICE@MS"},
       }) {
    std::string why = refusal(c.text);
    EXPECT_NE(why.find(c.says), std::string::npos) << c.text << ": " << why;
    EXPECT_NE(why.find(std::string("\"") + c.text + "\""), std::string::npos)
        << why;
  }
}

TEST(EmuFaults, TheNthFrameOfTheNamedEndIsHitAndNoOther) {
  EmuFaultDice dice(parseEmuFaults("drop@3:0:rdma_en2", kDevices).frames, 1);
  std::vector<int> dropped;
  for (int frame = 1; frame <= 6; ++frame) {
    // Mac 0 sends on both of its devices; only rdma_en2's third counts.
    if (dice.next(0, "rdma_en5", 1, "rdma_en6").drop) dropped.push_back(-frame);
    if (dice.next(0, "rdma_en2", 1, "rdma_en3").drop) dropped.push_back(frame);
  }
  EXPECT_EQ(dropped, std::vector<int>{3});
}

TEST(EmuFaults, ARateOnOneCableHitsBothDirectionsOfItOnly) {
  EmuFaultDice dice(parseEmuFaults("dup:0.5:1:rdma_en3", kDevices).frames, 7);
  int onCable = 0;
  int elsewhere = 0;
  for (int i = 0; i < 10000; ++i) {
    onCable += dice.next(0, "rdma_en2", 1, "rdma_en3").duplicate;
    onCable += dice.next(1, "rdma_en3", 0, "rdma_en2").duplicate;
    elsewhere += dice.next(0, "rdma_en5", 1, "rdma_en6").duplicate;
  }
  // A fixed seed: the same count every run; about half of 20,000.
  EXPECT_GT(onCable, 9000);
  EXPECT_LT(onCable, 11000);
  EXPECT_EQ(elsewhere, 0);
}

}  // namespace
}  // namespace mcl::transport::rdma
