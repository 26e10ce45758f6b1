#include "transports/tcp/tcp_sockets.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "base/stranger_policy.h"
#include "platform/interfaces.h"

namespace mcl::transport::tcp {

namespace {

std::string joinNames(const std::set<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Connects over one link. A peer's listener is up before its address is
// published, so "no route" means the path is not there yet: a cable just
// plugged back in, whose neighbour entry failed while it was out. Those are
// retried until the deadline; anything else fails at once.
platform::Socket connectOverLink(const platform::SocketAddress& local,
                                 const platform::SocketAddress& remote,
                                 platform::Deadline deadline) {
  while (true) {
    try {
      return platform::connectTcpFrom(local, remote, deadline);
    } catch (const std::system_error& e) {
      const int code = e.code().value();
      if ((code != EHOSTUNREACH && code != ENETUNREACH) ||
          platform::Clock::now() + std::chrono::milliseconds(50) >= deadline)
        throw;
      usleep(50 * 1000);
    }
  }
}

// Sleeps in poll() on every socket of the device, plus a pipe for abort.
class TcpWaker final : public Waker {
 public:
  explicit TcpWaker(const std::vector<TcpConnection*>& connections)
      : connections_(connections) {
    platform::openWakePipe(&wakeRead_, &wakeWrite_);
  }
  ~TcpWaker() override {
    close(wakeRead_);
    close(wakeWrite_);
  }
  uint32_t arm() override { return 0; }
  void sleep(uint32_t, int64_t timeoutNs) override {
    std::vector<pollfd> fds;
    fds.push_back({wakeRead_, POLLIN, 0});
    // Only what we would act on: data waiting for a later receive (or a
    // closed socket) would make poll() return at once, forever.
    for (TcpConnection* c : connections_)
      for (size_t i = 0; i < c->socketCount(); ++i) {
        short events = static_cast<short>((c->wantsRead(i) ? POLLIN : 0) |
                                          (c->wantsWrite(i) ? POLLOUT : 0));
        if (events != 0) fds.push_back({c->socketFd(i), events, 0});
      }
    int ms = static_cast<int>((timeoutNs + 999999) / 1000000);
    // Slots that wait for acknowledgements: no poll() event says they
    // came, so a look every millisecond.
    for (TcpConnection* c : connections_)
      if (c->awaitsAcknowledgement()) ms = std::min(ms, 1);
    poll(fds.data(), fds.size(), ms);
  }
  void disarm() override {
    char buf[64];
    while (read(wakeRead_, buf, sizeof(buf)) > 0) {
    }
  }
  void interrupt() override {
    char byte = 1;
    if (write(wakeWrite_, &byte, 1) < 0) {
      // Full pipe: a wake-up is already pending.
    }
  }

 private:
  const std::vector<TcpConnection*>& connections_;
  int wakeRead_ = -1;
  int wakeWrite_ = -1;
};

std::string describeLinks(const std::vector<Link>& links, int sockets) {
  std::string text = "tcp ";
  for (size_t i = 0; i < links.size(); ++i) {
    if (i > 0) text += "+";
    text +=
        links[i].local.interfaceName + "->" + links[i].remote.address.host();
  }
  text += " (" + std::string(linkKindName(links.front().kind)) + ", " +
          std::to_string(sockets) + " sockets per link)";
  return text;
}

}  // namespace

TcpSockets::TcpSockets(int rank, const Secret& secret, uint64_t commId,
                       const TcpOptions& options)
    : rank_(rank), secret_(secret), commId_(commId), options_(options) {
  topology::IfnameFilter filter = topology::parseIfnameFilter(options.ifname);
  std::vector<platform::Socket> listening;
  for (const auto& nic : platform::listInterfaces()) {
    Endpoint e;
    e.interfaceName = nic.name;
    e.address = nic.address;
    e.prefixLength = nic.prefixLength;
    e.loopback = nic.loopback;
    e.allowed = filter.matches(nic.name);
    if (e.allowed) {
      try {
        platform::Socket s = platform::listenTcpInRange(
            nic.address, stranger_policy::kListenBacklog, options.ports);
        e.address = platform::localAddress(s.fd());
        listening.push_back(std::move(s));
      } catch (const std::exception& x) {
        MCL_LOG(Warn, kLogInit, "rank %d: cannot listen on %s (%s): %s", rank,
                nic.name.c_str(), nic.address.host().c_str(), x.what());
        e.allowed = false;
      }
    }
    endpoints_.push_back(e);
  }
  listener_ =
      std::make_unique<TcpListener>(std::move(listening), secret, commId, rank);
  waker_ = std::make_unique<TcpWaker>(connections_);
}

TcpSockets::~TcpSockets() { rejoin_.reset(); }

void TcpSockets::stopListening() {
  for (const auto& [peer, links] : links_)
    if (links.size() > 1 || hasStandby(peer))
      return;  // a cable may come back (cable_rejoin.h)
  listener_.reset();
}

ProvenSocket TcpSockets::connectAndProve(int peer, const Link& link,
                                         const StreamKey& key,
                                         platform::Deadline deadline) {
  using platform::Clock;
  auto attempt = std::chrono::duration_cast<Clock::duration>(
      stranger_policy::kFirstAttempt);
  while (true) {
    const auto attemptDeadline = std::min(deadline, Clock::now() + attempt);
    std::string why;
    try {
      platform::Socket sock = connectOverLink(
          link.local.address, link.remote.address, attemptDeadline);
      const SessionKeys keys =
          clientHandshake(sock.fd(), secret_, commId_, key, attemptDeadline);
      return ProvenSocket{std::move(sock), keys};
    } catch (const Error&) {
      throw;  // the peer does not know the secret: not ours
    } catch (const platform::TimeoutError& e) {
      why = e.what();
      attempt = std::min<Clock::duration>(attempt * 2,
                                          stranger_policy::kLongestAttempt);
    } catch (const platform::ConnectionClosed& e) {
      why = e.what();  // dropped by a listener busy with strangers
    } catch (const std::system_error& e) {
      why = e.what();
      // A reset is a listener that dropped this attempt: again. Refused
      // or unreachable (past connectOverLink's retries) fails at once.
      const int code = e.code().value();
      if (code != ECONNRESET && code != EPIPE) deadline = Clock::now();
    }
    if (Clock::now() >= deadline)
      throw error(mclSystemError,
                  "rank %d: cannot connect to rank %d at %s over %s: %s", rank_,
                  peer, link.remote.address.toString().c_str(),
                  link.local.interfaceName.c_str(), why.c_str());
    MCL_LOG(Trace, kLogInit, "rank %d: TCP attempt to rank %d failed: %s",
            rank_, peer, why.c_str());
    usleep(10 * 1000);
  }
}

void TcpSockets::connectPeers(
    const std::vector<std::vector<Endpoint>>& all,
    const std::vector<int>& peers, const std::vector<bool>& sameHost,
    const std::map<int, InterfaceRestriction>& restrictions,
    platform::Deadline deadline, const std::function<void()>& betweenSlices) {
  for (int peer : peers) {
    std::vector<Endpoint> mine = endpoints_;
    std::vector<Endpoint> theirs = all[static_cast<size_t>(peer)];
    if (auto r = restrictions.find(peer); r != restrictions.end()) {
      mine = onlyInterfaces(mine, r->second.local);
      theirs = onlyInterfaces(theirs, r->second.remote);
    }
    std::vector<Link> links =
        chooseLinks(mine, theirs, sameHost[static_cast<size_t>(peer)]);
    // Cables named by the file must share a subnet; a routed path between
    // them is not what the file describes.
    bool unroutable = links.empty() || links.front().kind == LinkKind::Routed;
    if (unroutable && restrictions.count(peer) != 0)
      throw error(mclInvalidUsage,
                  "rank %d: MCL_TOPO_FILE names the cables to rank %d, but "
                  "their interfaces (here: %s; there: %s) share no subnet "
                  "that MCL_SOCKET_IFNAME allows",
                  rank_, peer, joinNames(restrictions.at(peer).local).c_str(),
                  joinNames(restrictions.at(peer).remote).c_str());
    if (links.empty())
      throw error(mclSystemError,
                  "rank %d: no network path to rank %d: no allowed interface "
                  "of this host shares a subnet or a route with it (check the "
                  "cables and MCL_SOCKET_IFNAME)",
                  rank_, peer);
    if (!sameHost[static_cast<size_t>(peer)] &&
        cableLeftUnused(mine, theirs, links)) {
      // Some cables in use, the others named away exactly ('=en2'): a
      // deliberate choice (mcl-perf qualify tests cables one by one).
      const bool chosen = links.front().kind == LinkKind::Cable &&
                          options_.ifname.rfind('=', 0) == 0;
      if (chosen)
        MCL_LOG(Info, kLogInit,
                "rank %d: MCL_SOCKET_IFNAME=%s keeps %s of the cables to rank "
                "%d",
                rank_, options_.ifname.c_str(),
                describeLinks(links, options_.socketsPerLink).c_str(), peer);
      else
        MCL_LOG(Warn, kLogInit,
                "rank %d: a cable joins this host to rank %d's, but traffic "
                "takes %s: MCL_SOCKET_IFNAME excludes %s, which costs %s of "
                "the bandwidth",
                rank_, peer,
                describeLinks(links, options_.socketsPerLink).c_str(),
                links.front().kind == LinkKind::Cable ? "a cable" : "the cable",
                links.front().kind == LinkKind::Cable ? "part" : "most");
    }
    MCL_LOG(Info, kLogInit, "rank %d: to rank %d via %s, data %s", rank_, peer,
            describeLinks(links, options_.socketsPerLink).c_str(),
            dataProtection(links.front().kind));
    // The verdict's mask has a bit per link: no Mac has a tenth of this.
    if (links.size() > kMostLinksPerPair) links.resize(kMostLinksPerPair);
    links_[peer] = links;
    // Where every cable to the peer carries nothing at init, the pair
    // starts on the LAN init would choose without them (never a routed
    // path: any two addresses, not known to lead anywhere), with a WARN.
    if (links.front().kind == LinkKind::Cable &&
        restrictions.count(peer) == 0) {
      const std::vector<Link> other =
          chooseLinks(withoutInterfaces(mine, links, true),
                      withoutInterfaces(theirs, links, false), false);
      if (!other.empty() && other.front().kind == LinkKind::Lan)
        fallbacks_[peer] = other.front();
    }
  }
  // The higher rank of each pair connects; the lower one accepts on its
  // listener thread, so nobody waits on a peer that is itself connecting.
  for (int peer : peers)
    if (peer < rank_) connectPair(peer, deadline);
  for (int peer : peers)
    if (peer > rank_) acceptPair(peer, deadline, betweenSlices);
}

const char* TcpSockets::dataProtection(LinkKind kind) const {
  const WireProtect protect = protectionFor(options_.protect, kind);
  return protect == WireProtect::None  ? "in the clear"
         : protect == WireProtect::Mac ? "authenticated (Poly1305)"
                                       : pieceCipherName(cipher_);
}

std::shared_ptr<std::atomic<bool>> TcpSockets::linkDownSignal(
    int peer, const Link& link) const {
  std::shared_ptr<std::atomic<bool>>& flag = linkDown_[{
      peer, link.local.interfaceName + " " + link.remote.address.host()}];
  if (!flag) flag = std::make_shared<std::atomic<bool>>(false);
  return flag;
}

std::unique_ptr<Connection> TcpSockets::connect(int peer, uint32_t channel) {
  auto it = sockets_.find({peer, channel});
  if (it == sockets_.end())
    throw error(mclInternalError, "rank %d: no TCP sockets to rank %d", rank_,
                peer);
  const WireProtect protect =
      protectionFor(options_.protect, links_[peer].front().kind);
  // Sockets are in link order, socketsPerLink each (connectPeers).
  std::vector<std::string> stripeLinks;
  std::vector<std::shared_ptr<const std::atomic<bool>>> linkDown;
  for (const Link& l : links_[peer])
    for (int s = 0; s < options_.socketsPerLink; ++s) {
      linkDown.push_back(linkDownSignal(peer, l));
      stripeLinks.push_back(linkLabel(l));
    }
  auto conn = std::make_unique<TcpConnection>(
      peer, std::move(it->second), options_.slots,
      describeLinks(links_[peer], options_.socketsPerLink), protect, cipher_,
      std::move(stripeLinks));
  sockets_.erase(it);
  if (auto standby = standby_.find({peer, channel});
      standby != standby_.end()) {
    conn->addStandby(std::move(standby->second),
                     protectionFor(options_.protect, LinkKind::Lan),
                     linkLabel(standbyLinks_.at(peer)));
    standby_.erase(standby);
  }
  conn->followLinkStates(std::move(linkDown));
  connections_.push_back(conn.get());
  if (links_[peer].size() > 1 || conn->hasStandby())
    watchForCablesBack(peer, channel, *conn);
  return conn;
}

void TcpSockets::watchForCablesBack(int peer, uint32_t channel,
                                    TcpConnection& conn) {
  if (!rejoin_)
    rejoin_ = std::make_shared<CableRejoin>(
        rank_,
        [this](int to, const Link& link, const StreamKey& key,
               platform::Deadline deadline) {
          ProvenSocket s = connectAndProve(to, link, key, deadline);
          platform::setBufferSizes(s.socket.fd(), options_.bufferBytes);
          return s;
        },
        [this](const StreamKey& key) -> std::optional<ProvenSocket> {
          StreamKey which;
          std::optional<ProvenSocket> s =
              listener_ ? listener_->takeArrived({key}, &which) : std::nullopt;
          if (s) platform::setBufferSizes(s->socket.fd(), options_.bufferBytes);
          return s;
        });
  CableRejoin::Target target;
  target.peer = peer;
  target.channel = channel;
  target.links = links_[peer];
  target.socketsPerLink = static_cast<size_t>(options_.socketsPerLink);
  for (const Link& l : links_[peer])
    target.linkDown.push_back(linkDownSignal(peer, l));
  if (rank_ > peer) conn.movesBackSecond();  // it makes the new sockets
  const uint64_t id = rejoin_->add(&conn, std::move(target));
  conn.whenGone([weak = std::weak_ptr<CableRejoin>(rejoin_), id] {
    if (auto rejoin = weak.lock()) rejoin->forget(id);
  });
}

}  // namespace mcl::transport::tcp
