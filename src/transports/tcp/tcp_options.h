// The TCP transport's settings (MCL_TCP_*, MCL_SOCKET_IFNAME), and its rows
// of the parameter registry.
#pragma once

#include <string>

#include "base/param_source.h"
#include "platform/socket.h"
#include "transports/tcp/tcp_connection.h"
#include "transports/tcp/wire_protect.h"

namespace mcl::transport::tcp {

struct TcpOptions {
  int socketsPerLink = 2;
  TcpSlots slots;
  std::string ifname;  // MCL_SOCKET_IFNAME
  int bufferBytes = 4 << 20;
  platform::PortRange ports;                // MCL_PORT_RANGE
  WireProtect protect = WireProtect::Auto;  // MCL_WIRE_PROTECT
  bool standby = true;                      // MCL_TCP_STANDBY
};

// Throws mclInvalidArgument naming the variable.
TcpOptions loadTcpOptions(const ParamSource& params);

ParamTable tcpParams();

}  // namespace mcl::transport::tcp
