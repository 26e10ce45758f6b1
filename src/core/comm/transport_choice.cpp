#include "core/comm/transport_choice.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/log.h"

namespace mcl {

TransportCandidates transportCandidates(const DeviceList& devices, int rank,
                                        int nranks) {
  TransportCandidates c;
  c.open.assign(devices.size(), false);
  c.ofRank.resize(devices.size());
  for (int a = 0; a < nranks; ++a)
    for (int b = a; b < nranks; ++b)
      for (size_t d = 0; d < devices.size(); ++d) {
        transport::Verdict v = devices[d]->reaches(a, b);
        if (v.answer == transport::Verdict::No) continue;
        // A device that may fail the pair keeps the next one in the race.
        c.open[d] = true;
        if (a == rank) c.ofRank[d].push_back(b);
        if (b == rank && a != b) c.ofRank[d].push_back(a);
        if (v.answer == transport::Verdict::Yes) break;
      }
  for (auto& ranks : c.ofRank) std::sort(ranks.begin(), ranks.end());
  return c;
}

std::vector<int> TransportChoice::peersOver(int rank, int d) const {
  std::vector<int> peers;
  for (int r = 0; r < nranks_; ++r)
    if (deviceOf(rank, r) == d) peers.push_back(r);
  return peers;
}

std::vector<int> TransportChoice::peersConnectedOver(int rank, int d) const {
  std::vector<int> peers;
  for (int r = 0; r < nranks_; ++r)
    if (deviceOf(rank, r) == d || (r != rank && standbyOf(rank, r) == d))
      peers.push_back(r);
  return peers;
}

bool TransportChoice::joinsSomePair(int d) const {
  for (int a = 0; a < nranks_; ++a)
    for (int b = a + 1; b < nranks_; ++b)
      if (deviceOf(a, b) == d) return true;
  return false;
}

namespace {

// One WARN on every rank for every pair that fell back, so that a job whose
// RDMA quietly became TCP says so in every rank's log.
void warnFallbacks(const std::vector<TransportFallback>& fallbacks,
                   const std::string& label) {
  if (fallbacks.empty()) return;
  constexpr size_t kListed = 8;
  std::string pairs;
  for (size_t i = 0; i < fallbacks.size() && i < kListed; ++i) {
    const TransportFallback& f = fallbacks[i];
    pairs += (i == 0 ? "" : "; ") + std::string("ranks ") +
             std::to_string(f.a) + " and " + std::to_string(f.b) + " use " +
             f.to + ": " + f.why;
  }
  if (fallbacks.size() > kListed)
    pairs += "; and " + std::to_string(fallbacks.size() - kListed) +
             " more pairs (mcl-perf topo lists them)";
  MCL_LOG(Warn, kLogInit,
          "%s: %s could not join %zu pair%s of ranks meant for it, which "
          "fall back: %s",
          label.c_str(), fallbacks.front().from.c_str(), fallbacks.size(),
          fallbacks.size() == 1 ? "" : "s", pairs.c_str());
}

// Each RDMA pair's standby: the first open device that can stand by for it
// (TCP, where both ends' details show a cable or LAN between them). Only
// RDMA loses a pair's last link without a way on of its own (TCP's
// connections move to the LAN themselves, shared memory has no cable).
std::vector<int> standbysOf(const DeviceList& devices,
                            const std::vector<bool>& opened,
                            const std::vector<int>& of, int nranks) {
  const auto n = size_t(nranks);
  std::vector<int> standby(n * n, -1);
  for (int a = 0; a < nranks; ++a)
    for (int b = a + 1; b < nranks; ++b) {
      const transport::LinkKind kind =
          devices[size_t(of[size_t(a) * n + size_t(b)])]->linkKind();
      if (kind != transport::LinkKind::Rdma &&
          kind != transport::LinkKind::EmulatedRdma)
        continue;
      for (size_t d = 0; d < devices.size(); ++d) {
        if (!opened[d] || !devices[d]->canStandBy(a, b)) continue;
        standby[size_t(a) * n + size_t(b)] = int(d);
        standby[size_t(b) * n + size_t(a)] = int(d);
        break;
      }
    }
  return standby;
}

}  // namespace

TransportChoice chooseTransports(const DeviceList& devices,
                                 const std::vector<bool>& opened, int nranks,
                                 const std::string& setting,
                                 const std::string& label,
                                 const std::string& oneHost) {
  const auto n = size_t(nranks);
  std::vector<int> of(n * n, -1);
  std::vector<TransportFallback> fallbacks;
  for (int a = 0; a < nranks; ++a)
    for (int b = a; b < nranks; ++b) {
      std::string reasons;
      const transport::Device* broken = nullptr;
      std::string brokenWhy;
      for (size_t d = 0;
           d < devices.size() && of[size_t(a) * n + size_t(b)] < 0; ++d) {
        if (!opened[d]) continue;
        transport::Verdict v = devices[d]->canConnect(a, b);
        if (v.answer == transport::Verdict::Yes) {
          of[size_t(a) * n + size_t(b)] = int(d);
          of[size_t(b) * n + size_t(a)] = int(d);
          if (broken != nullptr)
            fallbacks.push_back(
                {a, b, broken->name(), brokenWhy, devices[d]->name()});
          continue;
        }
        // The transport asked for by name is strict: a pair of its kind
        // that it cannot join fails init instead of running elsewhere.
        if (v.decline != transport::Verdict::NotMine &&
            setting == devices[d]->name())
          throw error(mclInvalidUsage,
                      "%s: MCL_TRANSPORT=%s cannot join ranks %d and %d: %s "
                      "(MCL_TRANSPORT=auto lets another transport join such "
                      "a pair)",
                      label.c_str(), setting.c_str(), a, b, v.why.c_str());
        if (v.decline == transport::Verdict::Broken && broken == nullptr) {
          broken = devices[d].get();
          brokenWhy = v.why;
        }
        reasons += std::string("; ") + devices[d]->name() + ": " + v.why;
      }
      if (of[size_t(a) * n + size_t(b)] < 0)
        throw error(mclInvalidUsage,
                    "%s: no transport joins ranks %d and %d under "
                    "MCL_TRANSPORT=%s%s",
                    label.c_str(), a, b, setting.c_str(), reasons.c_str());
    }
  warnFallbacks(fallbacks, label);
  std::vector<int> standby = setting == "auto"
                                 ? standbysOf(devices, opened, of, nranks)
                                 : std::vector<int>{};
  TransportChoice choice(nranks, std::move(of), std::move(fallbacks));
  choice.setStandbys(std::move(standby));
  // A transport asked for by name that joins nobody is a mistake the user
  // should hear about, not a job that silently runs over something else.
  if (setting != "auto" && nranks > 1 && !devices.empty() &&
      setting == devices.front()->name() && !choice.joinsSomePair(0)) {
    transport::Verdict v = devices.front()->reaches(0, 1);
    throw error(mclInvalidUsage,
                "%s: MCL_TRANSPORT=%s, but it joins none of the %d ranks%s: "
                "%s",
                label.c_str(), setting.c_str(), nranks,
                oneHost.empty() ? ""
                                : (" (all " + std::to_string(nranks) +
                                   " ranks are on this host, " + oneHost + ")")
                                      .c_str(),
                v.why.c_str());
  }
  return choice;
}

}  // namespace mcl
