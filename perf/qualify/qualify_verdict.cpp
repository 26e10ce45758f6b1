#include "qualify/qualify_verdict.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/text_format.h"

namespace mcl::perf {

namespace {

// Half the median of the cables (or Macs) like it: one bad cable among
// good ones stands out, whatever the nominal rate says.
constexpr double kPeerFraction = 0.5;
// A fastest round trip this many times the median of its kind's, and a
// millisecond longer, is slow too: traffic taking a detour (a bridge, a
// switch, Wi-Fi). The fastest, not the median, and a margin this wide: on
// a busy machine every round trip of a pair can stretch by a wake-up or
// two (0.1-0.2 ms measured on the CI VM), the cable having no part in it.
constexpr double kRoundTripFactor = 5;
constexpr double kRoundTripExcessUs = 1000;
// More frames (RDMA) or bytes (TCP) sent again than one in this many: the
// cable is bad, whatever it still moves (issue 48: a wire losing over 1
// in 100 is reported; issue 51: LOSSY).
constexpr double kLossyOneIn = 100;
// And for TCP at least this much sent again: on a busy machine the kernel
// resends a segment whose acknowledgement is merely late (a tail-loss
// probe: up to 64 KiB on a veth cable), which a short test's 1% can be
// (CI: a healthy veth cable called LOSSY). A lossy cable resends far more.
constexpr double kLossyLeastBytes = 1 << 20;

double medianOf(std::vector<double> values) { return summarize(values).median; }

void judgeDirection(const std::string& direction, double gbps,
                    double nominalFloor, double nominalGbps, double fraction,
                    double peerMedian, const std::string& kind,
                    std::vector<std::string>& reasons) {
  if (nominalFloor > 0 && gbps < nominalFloor)
    reasons.push_back(formatText(
        "%s %.3g GB/s, under %.0f%% of the nominal %.3g Gb/s (%.3g GB/s)",
        direction.c_str(), gbps, fraction * 100, nominalGbps, nominalFloor));
  if (peerMedian > 0 && gbps < kPeerFraction * peerMedian)
    reasons.push_back(
        formatText("%s %.3g GB/s, under half the median of the %s cables "
                   "(%.3g GB/s)",
                   direction.c_str(), gbps, kind.c_str(), peerMedian));
}

}  // namespace

const char* verdictName(Verdict v) {
  switch (v) {
    case Verdict::Ok:
      return "OK";
    case Verdict::Lossy:
      return "LOSSY";
    case Verdict::Slow:
      return "SLOW";
    case Verdict::Flapping:
      return "FLAPPING";
    case Verdict::Dead:
      return "DEAD";
  }
  return "?";
}

double nominalFraction(const std::string& transport) {
  // RDMA over Thunderbolt 5 is reported at 3.5-7.6 GB/s of 10; TCP over it
  // at 52-64 Gb/s with 4 streams, less with fewer: generous floors that a
  // healthy cable clears and a cable running at a lower speed does not.
  return transport == "rdma" ? 0.3 : 0.15;
}

void judgeCables(const QualifyPlan& plan,
                 std::vector<CableMeasurement>& cables) {
  std::map<std::string, std::vector<double>> rates, trips;
  for (size_t i = 0; i < cables.size(); ++i) {
    if (cables[i].dead) continue;
    const std::string& kind = plan.cables[i].kind;
    rates[kind].push_back(cables[i].gbpsAtoB);
    rates[kind].push_back(cables[i].gbpsBtoA);
    trips[kind].push_back(cables[i].roundTripUs.min);
  }
  const double fraction = nominalFraction(plan.transport);
  for (size_t i = 0; i < cables.size(); ++i) {
    CableMeasurement& m = cables[i];
    const CableUnderTest& c = plan.cables[i];
    m.reasons.clear();
    if (m.dead) {
      m.verdict = Verdict::Dead;
      m.reasons.push_back(c.deadAtDetection.empty()
                              ? "no traffic passes: " + m.deadReason
                              : m.deadReason);
      continue;
    }
    // The emulator's rates are this machine's CPU copying frames, neither
    // the nominal rate nor a cable's: only DEAD means something there.
    const double floor = plan.emulated ? 0 : c.nominalGbps / 8 * fraction;
    const double peers = plan.emulated ? 0 : medianOf(rates[c.kind]);
    m.verdict = Verdict::Ok;
    auto judged = [&m](Verdict v, std::string reason) {
      m.reasons.push_back(std::move(reason));
      m.verdict = std::max(m.verdict, v);
    };
    if (m.linkLosses > 0)
      judged(Verdict::Flapping,
             formatText("its link went down %.0f time(s) during the test "
                        "(counted at each end) and came back",
                        m.linkLosses));
    std::vector<std::string> slow;
    judgeDirection(c.a.hostName + " -> " + c.b.hostName, m.gbpsAtoB, floor,
                   c.nominalGbps, fraction, peers, c.kind, slow);
    judgeDirection(c.b.hostName + " -> " + c.a.hostName, m.gbpsBtoA, floor,
                   c.nominalGbps, fraction, peers, c.kind, slow);
    const double trip = medianOf(trips[c.kind]);
    if (m.roundTripUs.min > kRoundTripFactor * trip &&
        m.roundTripUs.min - trip > kRoundTripExcessUs)
      slow.push_back(formatText(
          "fastest round trip %.1f us, over 5 times that of its kind "
          "(median %.1f us) and 1 ms longer",
          m.roundTripUs.min, trip));
    for (std::string& reason : slow) judged(Verdict::Slow, std::move(reason));
    if (m.framesLost > 0 && m.framesLost * kLossyOneIn > m.framesReceived)
      judged(Verdict::Lossy,
             formatText(
                 "loses %.2f%% of its frames (%.0f of %.0f), each sent again",
                 100 * m.framesLost / m.framesReceived, m.framesLost,
                 m.framesReceived));
    if (m.bytesResent >= kLossyLeastBytes &&
        m.bytesResent * kLossyOneIn > m.bytesSent)
      judged(Verdict::Lossy,
             formatText("the kernel sent %.2f%% of its bytes again (%.0f of "
                        "%.0f): packets lost on the way",
                        100 * m.bytesResent / m.bytesSent, m.bytesResent,
                        m.bytesSent));
  }
}

void judgeMacs(const QualifyPlan& plan,
               const std::vector<CableMeasurement>& cables,
               std::vector<MacMeasurement>& macs) {
  std::vector<double> copies, reductions;
  for (const MacMeasurement& m : macs) {
    copies.push_back(m.speed.memcpyGBps);
    reductions.push_back(m.speed.reduceGBps);
  }
  const double copyMedian = medianOf(copies);
  const double reduceMedian = medianOf(reductions);
  for (size_t i = 0; i < macs.size(); ++i) {
    MacMeasurement& m = macs[i];
    m.reasons.clear();
    if (macs.size() > 1 && m.speed.memcpyGBps < kPeerFraction * copyMedian)
      m.reasons.push_back(
          formatText("copies %.3g GB/s, under half the median Mac (%.3g GB/s)",
                     m.speed.memcpyGBps, copyMedian));
    if (macs.size() > 1 && m.speed.reduceGBps < kPeerFraction * reduceMedian)
      m.reasons.push_back(
          formatText("reduces %.3g GB/s, under half the median Mac (%.3g GB/s)",
                     m.speed.reduceGBps, reduceMedian));
    // The emulator's cables are this machine's caches copying frames:
    // they say nothing of what a Mac must keep up with.
    double fastest = 0;
    std::string fastestName;
    for (size_t k = 0; k < cables.size() && !plan.emulated; ++k) {
      const CableUnderTest& c = plan.cables[k];
      if (cables[k].dead ||
          (c.a.host != plan.macs[i].host && c.b.host != plan.macs[i].host))
        continue;
      const double rate = std::max(cables[k].gbpsAtoB, cables[k].gbpsBtoA);
      if (rate > fastest) {
        fastest = rate;
        fastestName = c.name();
      }
    }
    if (fastest > 0 && m.speed.reduceGBps < fastest)
      m.reasons.push_back(formatText(
          "reduces %.3g GB/s, slower than its fastest cable delivers "
          "(%.3g GB/s, %s)",
          m.speed.reduceGBps, fastest, fastestName.c_str()));
    m.verdict = m.reasons.empty() ? Verdict::Ok : Verdict::Slow;
  }
}

}  // namespace mcl::perf
