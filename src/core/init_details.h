// What the ranks of a new communicator tell each other in init's first
// all-gather (comm_init.cpp): what each can offer for transports, its
// host's inventory, and settings every rank must share. A peer's bytes are
// outside input: decodeDetails bounds every field and refuses the rest.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mcl {

struct TransportDetails {
  uint64_t shmCapacity = 0;
  uint64_t tcpCapacity = 0;
  uint32_t tcpSockets = 0;    // per link; both ends must agree
  uint32_t tcpSlotBytes = 0;  // likewise
  std::string segment;
  std::vector<uint8_t> endpoints;
  std::string inventory;   // JSON from each host's lowest rank, else empty
  std::string topoFile;    // TopologyFileRead::status
  std::string transport;   // MCL_TRANSPORT: every rank must agree
  std::string algorithms;  // MCL_ALGO, as forced: likewise
  uint32_t rdmaFrameBytes = 0;
  uint32_t rdmaDepth = 0;
  uint32_t cores = 0;  // online CPUs: the tuner asks if hosts are crowded
};

std::vector<uint8_t> encodeDetails(const TransportDetails& d);

// Throws mclRemoteError ("malformed transport details: ...") on bytes that
// are not exactly one encoding with every field within its bound.
TransportDetails decodeDetails(const std::vector<uint8_t>& bytes);

}  // namespace mcl
