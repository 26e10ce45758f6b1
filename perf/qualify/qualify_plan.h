// What `mcl-perf qualify` tests: every cable of the cluster (each wire of a
// doubled pair on its own) with the ranks at its two ends, and every Mac
// with the rank that measures it. Cables come from the topology the
// library detected (TCP over Thunderbolt or Ethernet, RDMA over
// Thunderbolt) or, for the emulated RDMA fabric, from its device matrix; a
// port that carries a cable's /30 address with nothing answering on it is
// a cable expected and missing (DEAD without a test).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace mcl::perf {

struct CableEnd {
  int host = 0;
  std::string hostName;
  int rank = 0;     // the job's rank that drives this end
  std::string end;  // interface (TCP) or RDMA device
};

struct CableUnderTest {
  std::string kind;        // thunderbolt, ethernet or emulated
  double nominalGbps = 0;  // per direction; 0: unknown
  int wire = 0;            // which of the pair's cables, from 0
  int wires = 1;           // the pair's cables
  CableEnd a;              // the lower host (Mac)
  CableEnd b;              // rank -1: no far end was found
  // Not to be measured: why it is dead already (a port configured for a
  // cable that answers nothing), or "".
  std::string deadAtDetection;

  // "h0:tb1 <-> h1:tb0".
  std::string name() const;
};

struct MacUnderTest {
  int host = 0;
  std::string name;
  int rank = 0;  // the lowest rank on it
};

struct QualifyPlan {
  std::string transport;  // tcp or rdma
  bool emulated = false;  // RDMA on the emulated fabric
  std::vector<CableUnderTest> cables;
  std::vector<MacUnderTest> macs;
  std::vector<std::string> notes;  // what could not be tested, and why
};

// From the job's topology JSON (mclCommGetTopology) and the transport
// asked for (tcp, rdma, or empty: RDMA where the Macs have it or the
// emulated fabric is configured, else TCP). False with *error when the
// plan cannot be made (a device matrix that cannot be read).
bool planQualification(const nlohmann::json& topology, int nranks,
                       const std::string& transport, QualifyPlan* plan,
                       std::string* error);

}  // namespace mcl::perf
