// A socket's silence judged by its own history (platform::SilenceHistory),
// as on macOS, whose TCP_CONNECTION_INFO says neither how many timeouts in
// a row nor how long since the last acknowledgement: the samples here are
// what that call would give every 100 ms. Where the kernel has its own
// figures (Linux), they decide.
#include <gtest/gtest.h>

#include <cstdint>

#include "platform/tcp_progress.h"

namespace mcl::platform {
namespace {

constexpr int64_t kMs = 1'000'000;

// What TCP_CONNECTION_INFO gives: no figures of the kernel's own.
TcpProgress sample(bool unacked, uint64_t in, uint64_t resent) {
  TcpProgress p;
  p.unacked = unacked;
  p.packetsIn = in;
  p.packetsResent = resent;
  return p;
}

TEST(SilenceHistory, NothingHeardForASecondWhileResendingIsSilent) {
  SilenceHistory h;
  int timeouts = -1;
  EXPECT_FALSE(h.silent(sample(true, 50, 0), 0, &timeouts));
  // The timer goes off at 0.2, 0.6 and 1.4 s; nothing comes back.
  EXPECT_FALSE(h.silent(sample(true, 50, 1), 300 * kMs, &timeouts));
  EXPECT_FALSE(h.silent(sample(true, 50, 2), 700 * kMs, &timeouts));
  EXPECT_FALSE(h.silent(sample(true, 50, 2), 1100 * kMs, &timeouts));
  EXPECT_TRUE(h.silent(sample(true, 50, 3), 1500 * kMs, &timeouts));
  EXPECT_EQ(timeouts, 3);
}

TEST(SilenceHistory, AnyPacketBackStartsTheCountAgain) {
  SilenceHistory h;
  int timeouts = 0;
  h.silent(sample(true, 50, 0), 0, &timeouts);
  h.silent(sample(true, 50, 2), 400 * kMs, &timeouts);
  h.silent(sample(true, 50, 3), 800 * kMs, &timeouts);
  // An acknowledgement (or anything) came: a lossy link, not a dead one.
  EXPECT_FALSE(h.silent(sample(true, 51, 3), 1000 * kMs, &timeouts));
  EXPECT_FALSE(h.silent(sample(true, 51, 4), 1400 * kMs, &timeouts));
  EXPECT_FALSE(h.silent(sample(true, 51, 5), 1800 * kMs, &timeouts));
  EXPECT_TRUE(h.silent(sample(true, 51, 6), 2100 * kMs, &timeouts));
}

TEST(SilenceHistory, QuietWithNothingWaitingIsNotSilence) {
  SilenceHistory h;
  int timeouts = 0;
  EXPECT_FALSE(h.silent(sample(false, 50, 9), 0, &timeouts));
  EXPECT_FALSE(h.silent(sample(false, 50, 9), 400 * kMs, &timeouts));
  // Bytes go out after the look at 0.4 s: the count starts there.
  EXPECT_FALSE(h.silent(sample(true, 50, 9), 800 * kMs, &timeouts));
  EXPECT_FALSE(h.silent(sample(true, 50, 10), 1200 * kMs, &timeouts));
  EXPECT_FALSE(h.silent(sample(true, 50, 11), 1600 * kMs, &timeouts));
  EXPECT_TRUE(h.silent(sample(true, 50, 12), 1900 * kMs, &timeouts));
}

TEST(SilenceHistory, QuietNobodyLookedAtIsNotCounted) {
  // Looked at only while an operation waits: after an idle gap, the
  // quiet before the first look is not known to have been silence.
  SilenceHistory h;
  int timeouts = 0;
  h.silent(sample(true, 50, 0), 0, &timeouts);
  EXPECT_FALSE(h.silent(sample(true, 50, 3), 5000 * kMs, &timeouts));
  EXPECT_FALSE(h.silent(sample(true, 50, 4), 5400 * kMs, &timeouts));
  EXPECT_FALSE(h.silent(sample(true, 50, 5), 5800 * kMs, &timeouts));
  EXPECT_TRUE(h.silent(sample(true, 50, 6), 6100 * kMs, &timeouts));
}

TEST(SilenceHistory, ResendsAloneOrQuietAloneAreNotEnough) {
  SilenceHistory h;
  int timeouts = 0;
  // Two resends in 3 s of quiet (a long first timeout): not yet.
  for (int64_t t = 0; t <= 3000; t += 300)
    EXPECT_FALSE(
        h.silent(sample(true, 50, t >= 2000 ? 2 : 0), t * kMs, &timeouts));
  SilenceHistory fast;
  fast.silent(sample(true, 50, 0), 0, &timeouts);
  // Three resends within half a second: too soon to call.
  EXPECT_FALSE(fast.silent(sample(true, 50, 3), 400 * kMs, &timeouts));
}

TEST(SilenceHistory, TheKernelsOwnFiguresDecideWhereItHasThem) {
  SilenceHistory h;
  TcpProgress p = sample(true, 50, 0);
  p.timeoutsInARow = 3;
  p.msSinceAck = 1200;
  int timeouts = 0;
  EXPECT_TRUE(h.silent(p, 0, &timeouts));
  EXPECT_EQ(timeouts, 3);
  p.msSinceAck = 200;
  EXPECT_FALSE(h.silent(p, 0, &timeouts));
}

}  // namespace
}  // namespace mcl::platform
