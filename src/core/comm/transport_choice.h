// The one decision of which transport joins each pair of ranks. Every rank
// computes it from the same inputs (where the ranks run, then every rank's
// details), so all agree on every pair without another round, and all fail
// alike when some pair cannot be joined.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "transports/device.h"

namespace mcl {

using DeviceList = std::vector<std::unique_ptr<transport::Device>>;

// Before anything is opened, from Device::reaches: which devices some pair
// of the communicator may use (each rank opens exactly those, alike), and
// the ranks each may join this rank to.
struct TransportCandidates {
  std::vector<bool> open;                // by device
  std::vector<std::vector<int>> ofRank;  // by device: this rank's candidates
};
TransportCandidates transportCandidates(const DeviceList& devices, int rank,
                                        int nranks);

// A pair that a transport should have joined and could not (a Broken
// verdict), now joined by a later one.
struct TransportFallback {
  int a = 0;  // a < b
  int b = 0;
  std::string from;  // "rdma"
  std::string why;   // the verdict's reason, naming the rank and device
  std::string to;    // "tcp"
};

// Each pair's device, from Device::canConnect over the opened devices in
// priority order.
class TransportChoice {
 public:
  TransportChoice() = default;
  TransportChoice(int nranks, std::vector<int> deviceOfPair,
                  std::vector<TransportFallback> fallbacks = {})
      : nranks_(nranks),
        deviceOfPair_(std::move(deviceOfPair)),
        fallbacks_(std::move(fallbacks)) {}
  // The index of the device joining ranks a and b (either order).
  int deviceOf(int a, int b) const {
    return deviceOfPair_[size_t(a) * size_t(nranks_) + size_t(b)];
  }
  // Ranks `rank` reaches over device d (itself included when d joins it to
  // itself), ascending.
  std::vector<int> peersOver(int rank, int d) const;
  // Whether d joins some two different ranks of the communicator.
  bool joinsSomePair(int d) const;
  // Whether d joins any pair, a rank to itself included.
  bool usesDevice(int d) const {
    return std::find(deviceOfPair_.begin(), deviceOfPair_.end(), d) !=
           deviceOfPair_.end();
  }
  // Every pair joined by another transport than the one meant for it.
  const std::vector<TransportFallback>& fallbacks() const { return fallbacks_; }
  // The device that stands by for a pair whose own loses its last link
  // (an RDMA pair's TCP), or -1; its connections are made at init beside
  // the pair's own.
  int standbyOf(int a, int b) const {
    return standbyOfPair_.empty()
               ? -1
               : standbyOfPair_[size_t(a) * size_t(nranks_) + size_t(b)];
  }
  // Whether d stands by for some pair (then it connects on every rank).
  bool standsBy(int d) const {
    return std::find(standbyOfPair_.begin(), standbyOfPair_.end(), d) !=
           standbyOfPair_.end();
  }
  void setStandbys(std::vector<int> standbyOfPair) {
    standbyOfPair_ = std::move(standbyOfPair);
  }
  // Ranks `rank` reaches over device d for a pair's own use or to stand
  // by for it: the peers d connects at init.
  std::vector<int> peersConnectedOver(int rank, int d) const;

 private:
  int nranks_ = 0;
  std::vector<int> deviceOfPair_;
  std::vector<TransportFallback> fallbacks_;
  std::vector<int> standbyOfPair_;  // by pair, as deviceOfPair_; -1: none
};

// Throws mclInvalidUsage naming the pair, MCL_TRANSPORT (`setting`) and why
// each device declined, when some pair has no device; when the transport
// MCL_TRANSPORT names declines a pair of its kind (NoPath, Broken: it is
// strict); or when it joins no two ranks. Under auto, pairs a Broken verdict
// sends to another transport are the choice's fallbacks(), and every rank
// logs one WARN listing them. oneHost: the host's name when every rank runs
// on it, else "".
// Under auto, an RDMA pair gets TCP as its standby where TCP is open and
// Device::canStandBy says so: a job whose last Thunderbolt cable between two
// Macs is lost goes on over TCP (another cable, the LAN), with a WARN.
TransportChoice chooseTransports(const DeviceList& devices,
                                 const std::vector<bool>& opened, int nranks,
                                 const std::string& setting,
                                 const std::string& label,
                                 const std::string& oneHost);

}  // namespace mcl
