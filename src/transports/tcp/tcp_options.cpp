#include "transports/tcp/tcp_options.h"

#include <cstdint>

#include "base/error.h"
#include "base/port_range.h"
#include "topology/ifname_filter.h"

namespace mcl::transport::tcp {

namespace {

constexpr ParamDef kParams[] = {
    {"MCL_SOCKET_IFNAME", "",
     "Interfaces TCP may use, NCCL's syntax: prefixes 'en,eth', '^' to "
     "exclude ('^docker,lo'), '=' for exact names ('=en2'). Empty: "
     "Thunderbolt-style point-to-point links first, then any other."},
    // Read by core too (the rendezvous root and the side channel listen
    // by the same rule); the TCP transport declares it, as the one that
    // always reads it.
    {"MCL_PORT_RANGE", "",
     "first-last: the ports mcl may listen on (the rendezvous without "
     "MCL_ROOT, the side channel, the TCP transport), for firewalls that "
     "open only those; empty: any the OS picks. Give each job on a host "
     "room for 2 ports per rank, plus 2 for the rendezvous."},
    {"MCL_TCP_NSOCKS", "2",
     "TCP sockets per link (cable) between two ranks; pieces are striped "
     "over them. 2 measured best on loopback (64 MiB all-reduce: 1 socket "
     "1.87, 2 sockets 2.07, 4 sockets 2.03 GB/s busbw)."},
    {"MCL_TCP_SLOT_BYTES", "131072",
     "Size of one TCP piece (a multiple of 64): the pipelining chunk of "
     "large transfers."},
    {"MCL_TCP_SLOTS", "8", "TCP pieces buffered per peer and direction."},
    {"MCL_TCP_STANDBY", "1",
     "1: where a pair runs on cables with a LAN beside them, init also "
     "makes a socket over the LAN, and a pair that loses its last cable "
     "goes on there (and back when the cable is back); slots then wait "
     "for the peer's acknowledgement, as over two cables. 0: none; a pair "
     "that loses its last cable waits for it. "
     "The connecting (higher) rank's setting decides."},
    {"MCL_WIRE_PROTECT", "auto",
     "Protection of TCP data on the wire: auto (encrypted and authenticated "
     "on LAN and routed paths, clear on point-to-point cables and loopback), "
     "none, mac (authenticated, readable) or encrypt (everywhere). Every "
     "rank must set the same. Bootstrap and control messages are always "
     "encrypted and authenticated."},
};

}  // namespace

ParamTable tcpParams() { return kParams; }

TcpOptions loadTcpOptions(const ParamSource& params) {
  TcpOptions o;
  o.socketsPerLink = static_cast<int>(params.integer("MCL_TCP_NSOCKS", 1, 64));
  o.slots.slotBytes =
      static_cast<uint32_t>(params.integer("MCL_TCP_SLOT_BYTES", 64, 64 << 20));
  if (o.slots.slotBytes % 64 != 0)
    throw error(mclInvalidArgument,
                "MCL_TCP_SLOT_BYTES=%u is not a multiple of 64",
                o.slots.slotBytes);
  o.slots.slots =
      static_cast<uint32_t>(params.integer("MCL_TCP_SLOTS", 2, 4096));
  o.ifname = params.text("MCL_SOCKET_IFNAME");
  topology::parseIfnameFilter(o.ifname);  // reject bad specs now
  o.ports = portRangeSetting(params);
  o.protect = parseWireProtect(params.text("MCL_WIRE_PROTECT"));
  o.standby = params.integer("MCL_TCP_STANDBY", 0, 1) == 1;
  return o;
}

}  // namespace mcl::transport::tcp
