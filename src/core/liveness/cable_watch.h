// Which of a rank's links to its peers can carry traffic, from the OS's own
// view of each interface (platform/link_state.h), read by the side
// channel's thread whenever the OS says a link changed and at least every
// quarter second. A cable pulled out is known within that time, where TCP
// would only notice it at its retransmission timers and mcl at MCL_TIMEOUT:
//   - a link goes down: a WARN naming it (both hosts, the interface and
//     address at each end), and how many links to the peer remain;
//   - the peer's last link goes down and no LAN leads to it (a routed
//     path is not counted: any two addresses make one): after
//     kNoPathGraceNs without a link, every operation waiting on that peer
//     fails, naming the cable;
//   - a link comes back: said, and counted.
// Only cables and LAN links are watched: a routed path's interface is not
// known to be the one its packets leave by.
// The watch tells the transport too (WatchedLink::downSignal): a TCP
// connection striped over a lost link carries on over the others
// (tcp_connection.h). A link that comes back is not taken up again by the
// connections that gave it up.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "platform/link_state.h"
#include "transports/device.h"

namespace mcl {

// How long a peer may be without any link before operations that wait on
// it fail: a flap shorter than this is ridden out by TCP itself.
constexpr int64_t kNoPathGraceNs = 1'000'000'000;

class CableWatch {
 public:
  // label: "comm <name> rank r/n"; hosts: every rank's host, as the
  // doctor names it ("host 1 (studio-b)").
  CableWatch(int rank, std::string label, std::vector<std::string> hosts,
             std::vector<transport::PeerLinks> peers);

  bool empty() const { return peers_.empty(); }
  // Reads every interface's state and says what changed since the last
  // look. The side channel's thread alone calls it.
  void check(int64_t nowNs);
  // What the kernel says of the side channel's socket to peer, which
  // leaves this host from `localAddress` for the peer's `peerAddress`:
  // whether it looks silent (platform::SilenceHistory), and the timeouts in
  // a row. The side channel's thread alone calls it, after check().
  void sideChannel(int peer, const std::string& localAddress,
                   const std::string& peerAddress, bool silent, int timeouts);
  // Why operations waiting on peer cannot complete ("" when they may):
  // its last link has been down for kNoPathGraceNs and nothing else leads
  // to it, or the side channel to it rides its only link still up and
  // hears nothing there (a rank that only receives has nothing
  // unacknowledged on its data sockets to tell it so); or every cable is
  // down, the connections moved to the LAN beside them, and the side
  // channel riding that LAN hears nothing there.
  std::string problemWith(int peer, int64_t nowNs) const;
  // Whether some way to peer may still carry bytes: a watched link up and
  // not silent, or a LAN beside them (not silent once every cable is
  // down). False for a peer it knows nothing of.
  bool someLinkUp(int peer) const;
  // The link the side channel to peer rides, named, where it is down or
  // silent while another link to peer carries (the data goes on there);
  // else "".
  std::string sideChannelLost(int peer) const;
  // For a timeout's message: the links to peer that are down, and since
  // when ("" when all are up).
  std::string noteOn(int peer, int64_t nowNs) const;
  // What it saw since the communicator began, for the topology dump and
  // mcl-perf's summary.
  struct Counts {
    uint64_t watched = 0;   // links watched
    uint64_t lost = 0;      // times a link went down
    uint64_t regained = 0;  // times one came back
    uint64_t downNow = 0;
    uint64_t leftOutAtInit = 0;  // links init left out (carried nothing)
    // Time some peer had fewer links than at the start, summed by peer.
    double secondsOnFewer = 0;
  };
  Counts counts(int64_t nowNs) const;

 private:
  struct Watched {
    transport::WatchedLink link;
    bool down = false;
    int64_t changedNs = 0;
  };
  // The first look: the links usable then are the ones watched. A link
  // that init connected over but whose interface does not look usable
  // (an OS that reports no carrier for its kind) is left alone rather
  // than called lost.
  void takeBaseline(const std::map<std::string, platform::InterfaceLink>& s);
  struct Peer {
    int peer = -1;
    std::string fallback;
    std::string fallbackAddress;
    std::string fallbackPeerAddress;
    bool movesToFallback = false;
    bool standbyOnly = false;  // a standby's links: never "no path"
    // The side channel rides the fallback and looked silent there.
    bool fallbackSilent = false;
    std::vector<Watched> links;
    int64_t allDownSinceNs = -1;  // -1 while some link is up
    int64_t fewerSinceNs = -1;    // -1 while every link is up
    int64_t fewerNs = 0;          // earlier stretches on fewer links
    // The side channel's socket to the peer looked silent on this link's
    // address (-1: not silent), with its timeouts in a row.
    int silentLink = -1;
    int silentTimeouts = 0;
    int sideLink = -1;  // the link the side channel rides, if watched
  };
  bool baselineTaken_ = false;

  // "cable host 0 (a) tb1 10.0.1.1/30 -> host 1 (b) tb0 10.0.1.2"
  std::string nameOf(const Peer& p, const Watched& w) const;
  // The WARN for a link that went down or came back (w.changedNs now): up
  // of total links to the peer are up.
  void sayChange(const Peer& p, const Watched& w, int up, int total) const;
  std::string downList(const Peer& p, int64_t nowNs) const;
  // problemWith for a pair with a fallback (a LAN beside its cables).
  std::string fallbackProblem(const Peer& p, int64_t nowNs) const;

  int rank_;
  std::string label_;
  std::vector<std::string> hosts_;
  mutable std::mutex mutex_;
  std::vector<Peer> peers_;
  uint64_t lost_ = 0;
  uint64_t regained_ = 0;
  uint64_t leftOutAtInit_ = 0;
};

}  // namespace mcl
