// How TCP data frames are protected on the wire (MCL_WIRE_PROTECT), and
// which protection a link gets under `auto`: a point-to-point cable between
// two Macs on a desk is a private wire, and loopback never leaves the host,
// so both stay in the clear at full speed; a LAN or routed path is shared
// with others, so frames there are encrypted and authenticated.
#pragma once

#include <string>

#include "transports/tcp/link_choice.h"

namespace mcl::transport::tcp {

enum class WireProtect {
  Auto,     // as the link: cables and loopback clear, others encrypted
  None,     // clear everywhere
  Mac,      // authenticated everywhere (readable, not alterable)
  Encrypt,  // encrypted and authenticated everywhere
};

// Throws mclInvalidArgument naming MCL_WIRE_PROTECT and the choices.
WireProtect parseWireProtect(const std::string& text);
const char* wireProtectName(WireProtect mode);
// What a link of this kind gets: never Auto.
WireProtect protectionFor(WireProtect mode, LinkKind kind);

}  // namespace mcl::transport::tcp
