// What the ranks of a new communicator tell each other in init's first
// all-gather (comm_init.cpp): each opened transport's details (bytes the
// transport encodes and checks itself), its host's inventory, and settings
// every rank must share. A peer's bytes are outside input: decodeDetails
// bounds every field and refuses the rest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mcl {

// One transport's part: its name and what transport::Device::details()
// made.
using DeviceDetails = std::pair<std::string, std::vector<uint8_t>>;

struct InitDetails {
  std::vector<DeviceDetails> devices;  // the transports this rank opened
  std::string inventory;    // JSON from each host's lowest rank, else empty
  std::string topoFile;     // TopologyFileRead::status
  std::string transport;    // MCL_TRANSPORT: every rank must agree
  std::string algorithms;   // MCL_ALGO, as forced: likewise
  uint32_t cores = 0;       // online CPUs: the tuner asks if hosts are crowded
  std::string sideChannel;  // "ip:port" of its peer watch; "" when off
  uint32_t peerTimeoutSeconds = 0;  // MCL_PEER_TIMEOUT: every rank agrees
};

constexpr size_t kMaxDevicesInDetails = 8;
constexpr size_t kMaxDeviceDetailsBytes = 80 * 1024;

std::vector<uint8_t> encodeDetails(const InitDetails& d);

// Throws mclRemoteError ("malformed init details: ...") on bytes that are
// not exactly one encoding with every field within its bound.
InitDetails decodeDetails(const std::vector<uint8_t>& bytes);

}  // namespace mcl
