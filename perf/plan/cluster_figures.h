// What `mcl-perf plan` knows of a cluster: each rank's host, memory and
// speed, and the measured cost of the messages a sharded model sends. The
// running job measures them (plan_command.cpp); `--save FILE` writes them
// and `--from FILE` plans from them offline.
#pragma once

#include <string>
#include <vector>

namespace mcl::perf::plan {

struct RankFigures {
  int rank = 0;
  std::string host;
  // The host's memory, and what is free of it, divided among the ranks on
  // that host (two ranks on one machine share it).
  double memoryBytes = 0;
  double freeBytes = 0;
  // Bytes of weights the decode kernel streams per second (out of the
  // caches) with every rank of its host decoding at once, and with this
  // rank alone (pipeline stages take turns); its multiply-adds x 2 per
  // second on a batch (in cache).
  double weightBytesPerS = 0;
  double weightBytesPerSAlone = 0;
  // With every rank at once, each over the matrices it holds in a
  // tensor-parallel group of t (index t - 1; narrower matrices stream at
  // another speed); empty or 0 where not measured.
  std::vector<double> weightBytesPerSByTp;
  double flopsPerS = 0;
  int ranksOnHost = 1;
  // Where the cluster has cables: whether this rank reaches another host
  // over one. A Mac that reaches the others only over the LAN (or a
  // routed path) is on no cable: no layout uses it.
  bool onCable = true;
  std::string rateSource;  // "measured", "quoted: Apple M3 Ultra", "--mem-bw"
};

// A message's cost at a few sizes (microseconds), measured; between them
// and past them by linear interpolation and extrapolation.
struct CostCurve {
  std::vector<double> bytes;
  std::vector<double> us;
  double at(double messageBytes) const;
};

struct ClusterFigures {
  std::string transport;  // what the links were measured on
  // In planning order (fastest weight rate first): layouts use the first
  // k ranks, tensor-parallel groups of consecutive ranks.
  std::vector<RankFigures> ranks;
  // allReduce[t - 2]: an all-reduce over the first t ranks, t = 2..n.
  std::vector<CostCurve> allReduce;
  // One point-to-point message between neighbouring ranks (half a round
  // trip): a pipeline stage's hop.
  CostCurve hop;
};

// Planning order: the ranks on no cable last, then the fastest decoders
// first; those within 10% of the fastest keep their order (noise must not
// reorder alike Macs).
void putFastestFirst(std::vector<RankFigures>* ranks);

// The rank's weight rate in a tensor-parallel group of tp of which `busy`
// ranks share its host (itself included) and decode at once: alone, the
// rate measured alone; in a group, the one measured for that group size,
// else between the rate alone and the rate with all of the host's ranks.
double weightRateIn(const RankFigures& r, int tp, int busy);

std::string figuresToJson(const ClusterFigures& f);
// Throws std::runtime_error naming `source` and the field at fault.
ClusterFigures figuresFromJson(const std::string& text,
                               const std::string& source);

}  // namespace mcl::perf::plan
