// Which cables RDMA can use between two ranks, and why not when it cannot:
// from every rank's report of its devices (opened, port state, the IPv4
// its GID maps) and the cabling, the cluster picture's on real hardware or
// the emulated fabric's. Every rank computes it from the same inputs, so
// all agree on every pair's transport without another round, and both ends
// list a pair's cables in the same order (the cluster's), so the k-th wire
// is the same cable on both sides however each Mac orders its ports.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topology/cluster.h"
#include "transports/device.h"
#include "transports/rdma/emu_fabric.h"
#include "transports/rdma/rdma_wires.h"

namespace mcl::transport::rdma {

// What one rank can do over RDMA, sent to the others in init's first
// all-gather.
struct RankRdma {
  int emuMac = 0;                 // the Mac it plays on the emulated fabric
  std::string unavailable;        // why it has no RDMA at all; "" when it has
  std::vector<std::string> kept;  // MCL_RDMA_DEVICES; empty: every device
  std::vector<PortReport> ports;  // the devices it opened (those kept)
};
std::vector<uint8_t> encodeRankRdma(const RankRdma& r);
// Throws mclRemoteError for bytes that are not a report.
RankRdma decodeRankRdma(const std::vector<uint8_t>& bytes);

// One pair's usable cables from rank a's side, and the verdict: Yes when
// some cable is usable; NoPath when no cable joins the two (or none has RDMA
// at either end); Broken, naming the rank, device and reason of every
// cable, when the cables are there and RDMA cannot use them.
struct PairPlan {
  WirePlan wires;
  Verdict verdict;
};

// Real hardware: the cluster's cables between a's and b's hosts, whose
// interface carries an RDMA device at both ends (rdma_enX on enX, or the
// one the inventory ties to it), each device usable with a GID that maps
// the interface's IPv4 address.
PairPlan planOnCluster(const topology::Cluster& cluster,
                       const std::vector<RankRdma>& ranks, int a, int b);

// The emulated fabric: its cables between the Macs a and b play.
PairPlan planOnFabric(const EmuFabric& fabric,
                      const std::vector<RankRdma>& ranks, int a, int b);

}  // namespace mcl::transport::rdma
