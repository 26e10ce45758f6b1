// Judging what `qualify` measured. A cable direction is SLOW when it moves
// less than a fraction of its nominal rate (the fraction the transport
// reaches on a healthy cable) or less than half the median of the cluster's
// cables of its kind, or when its fastest round trip is many times theirs;
// DEAD when no traffic passes; SLOW too when it loses more than one frame
// in 100 (RDMA sends each again, at a cost). A Mac is SLOW when it copies or
// reduces at less than half the median Mac, or reduces slower than its fastest
// cable delivers (it, not the cable, would then limit every all-reduce).
#pragma once

#include <string>
#include <vector>

#include "common/sample_stats.h"
#include "qualify/mac_speed.h"
#include "qualify/qualify_plan.h"

namespace mcl::perf {

enum class Verdict { Ok, Slow, Dead };
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
  Verdict verdict = Verdict::Ok;
  std::vector<std::string> reasons;  // why SLOW or DEAD
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
