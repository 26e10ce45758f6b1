// Judging what `qualify` measured. A cable direction is SLOW when it moves
// less than a fraction of its nominal rate (the fraction the transport
// reaches on a healthy cable) or less than half the median of the cluster's
// cables of its kind, or when its fastest round trip is many times theirs;
// DEAD when no traffic passes; FLAPPING when its link went down during its
// test (and came back: the test passed); LOSSY when more than one frame
// (RDMA) or byte (TCP, the kernel's retransmissions) in 100 is sent again.
// The verdict is the worst that applies (DEAD, FLAPPING, SLOW, LOSSY), and
// every reason is given. A Mac is SLOW when it copies or
// reduces at less than half the median Mac, or reduces slower than its fastest
// cable delivers (it, not the cable, would then limit every all-reduce).
#pragma once

#include <string>
#include <vector>

#include "common/sample_stats.h"
#include "qualify/mac_speed.h"
#include "qualify/qualify_plan.h"

namespace mcl::perf {

// In order of severity.
enum class Verdict { Ok, Lossy, Slow, Flapping, Dead };
const char* verdictName(Verdict v);

struct CableMeasurement {
  bool dead = false;
  std::string deadReason;  // the library's message
  SampleSummary roundTripUs;
  double gbpsAtoB = 0;  // GB/s (1e9 bytes)
  double gbpsBtoA = 0;
  // RDMA: the frames both ends received during the test (those lost on
  // the way included) and the ones lost, each of which was sent again.
  double framesReceived = 0;
  double framesLost = 0;
  // TCP: the bytes the ends handed to their sockets, and those the kernel
  // sent again.
  double bytesSent = 0;
  double bytesResent = 0;
  // Times a link of the cable went down during its test, at either end.
  double linkLosses = 0;
  Verdict verdict = Verdict::Ok;
  std::vector<std::string> reasons;  // why not OK
};

struct MacMeasurement {
  MacSpeed speed;
  Verdict verdict = Verdict::Ok;
  std::vector<std::string> reasons;
};

// The nominal rate's fraction a healthy cable must reach per direction.
double nominalFraction(const std::string& transport);

// Fills the verdicts and reasons of cables[i] (plan.cables[i]).
void judgeCables(const QualifyPlan& plan,
                 std::vector<CableMeasurement>& cables);
// Fills the verdicts of macs[i] (plan.macs[i]); cables are judged.
void judgeMacs(const QualifyPlan& plan,
               const std::vector<CableMeasurement>& cables,
               std::vector<MacMeasurement>& macs);

}  // namespace mcl::perf
