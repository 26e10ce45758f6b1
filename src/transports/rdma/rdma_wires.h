// The RDMA wires of one rank in one communicator (what RdmaDevice builds
// on): the provider (real
// verbs or the emulated fabric), the devices it opened, the wires (queue
// pairs, one per cable and channel) to each peer, and their connections.
// Setup is two steps around the bootstrap: make the queue pairs and publish
// their addresses, then connect each to the peer's for the same cable.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "transports/rdma/provider.h"
#include "transports/rdma/rdma_connection.h"
#include "transports/rdma/rdma_options.h"
#include "transports/transport.h"

namespace mcl::transport::rdma {

// The cables to one peer, in the order both ends agree on: (local device,
// the peer's device); a cable left out has empty names and keeps its place.
using WirePlan = std::vector<std::pair<std::string, std::string>>;

constexpr uint32_t kRdmaChannels = 2;  // collective, point-to-point
// Inline bytes asked for under MCL_RDMA_INLINE=1: a credit-only frame.
constexpr uint32_t kInlineBytesAsked = 64;

// What a rank found on one of its RDMA devices when it opened it.
struct PortReport {
  std::string device;   // "rdma_en2"
  std::string netdev;   // "en2"; may be empty
  std::string ipv4;     // the address its GID maps ("169.254.3.1"); "" if none
  std::string problem;  // why RDMA cannot use it; "" when it can
};

// One queue pair of a rank's addresses(): which peer, channel and cable it
// is for, and how to reach it.
struct WireAddress {
  uint32_t target = 0;
  uint32_t channel = 0;
  uint32_t index = 0;
  QpAddress address;
};
// The wire form of addresses(), which travels over the bootstrap; decoding
// throws mclRemoteError for bytes that are not one.
std::vector<uint8_t> encodeAddresses(const std::vector<WireAddress>& wires);
std::vector<WireAddress> decodeAddresses(const std::vector<uint8_t>& bytes);

class RdmaWires {
 public:
  RdmaWires(int rank, const RdmaOptions& options);
  ~RdmaWires();

  bool emulated() const { return provider_->emulated(); }
  const char* providerName() const { return provider_->name(); }

  // Opens every device the options keep (MCL_RDMA_DEVICES), reads its
  // port, and makes and drops one queue pair as the wires will: what each
  // device can do, before any pair is chosen. A device that fails stays
  // closed, with the reason; a setting the device cannot take
  // (MCL_RDMA_DEPTH, MCL_RDMA_QP) throws.
  std::vector<PortReport> probePorts();

  // The wires to each peer of the emulated fabric (macOfRank[r]: the Mac
  // rank r plays, this rank's included): every cable between the two Macs,
  // in the fabric's order.
  // Cables wired, in all and to the best-cabled peer (for the footprint).
  size_t cableCount() const;
  size_t mostCablesToOnePeer() const;

  std::map<int, WirePlan> emulatedPlan(const std::vector<int>& peers,
                                       const std::vector<int>& macOfRank) const;

  // Opens the devices and makes the queue pairs of `plan`; then addresses()
  // is what the peers need.
  void createWires(const std::map<int, WirePlan>& plan);
  std::vector<uint8_t> addresses() const;
  // `all[r]`: rank r's addresses(). Connects every queue pair to its peer's
  // for the same cable and channel, and posts the receives of every
  // connection: this must happen before the init barrier, since a peer past
  // it may send at once, and UC drops a frame that finds no receive.
  void connectWires(const std::vector<std::vector<uint8_t>>& all);
  // From every rank's addresses(): the fewest cables between two ranks
  // joined over RDMA (0 when none are), the same answer on every rank.
  static int fewestWiresPerPair(const std::vector<std::vector<uint8_t>>& all);

  // The connection made by connectWires (once per peer and channel).
  std::unique_ptr<Connection> connect(int peer, uint32_t channel);
  Waker& waker() { return *waker_; }
  // What the waker does before each nap (ConnectionSet::serviceAll).
  void serviceConnections() { connections_->serviceAll(); }
  // Once the connections are made: the set's keeper services them while no
  // operation uses them (ConnectionSet::keepServiced); every use must hold
  // beginUse/endUse from then on.
  void keepServiced() { connections_->keepServiced(); }
  RdmaLossCounts lossCounts() const { return connections_->counts(); }
  void beginUse() { connections_->beginUse(); }
  void endUse() { connections_->endUse(); }
  // Receive buffering toward this rank over one wire.
  size_t capacityPerWire() const;
  std::string describe(int peer) const;  // "rdma_en2->rdma_en4 + ..., UC"

 private:
  struct PendingWire {
    int peer;
    uint32_t channel;
    uint32_t index;
    Wire wire;
  };

  std::unique_ptr<DeviceContext> openChecked(const std::string& device);
  std::unique_ptr<QueuePair> createQueuePair(DeviceContext& ctx,
                                             CompletionQueue& cq);

  int rank_;
  RdmaOptions options_;
  std::unique_ptr<Provider> provider_;
  std::map<std::string, std::unique_ptr<DeviceContext>> contexts_;
  std::map<int, WirePlan> plan_;
  std::vector<PendingWire> wires_;
  std::map<std::pair<int, uint32_t>, std::unique_ptr<RdmaConnection>> ready_;
  std::shared_ptr<ConnectionSet> connections_;
  std::unique_ptr<Waker> waker_;
};

}  // namespace mcl::transport::rdma
