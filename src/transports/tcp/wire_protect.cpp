#include "transports/tcp/wire_protect.h"

#include <string>

#include "base/error.h"

namespace mcl::transport::tcp {

WireProtect parseWireProtect(const std::string& text) {
  if (text.empty() || text == "auto") return WireProtect::Auto;
  if (text == "none") return WireProtect::None;
  if (text == "mac") return WireProtect::Mac;
  if (text == "encrypt") return WireProtect::Encrypt;
  throw error(mclInvalidArgument,
              "MCL_WIRE_PROTECT='%s' is not one of auto, none, mac, encrypt",
              text.c_str());
}

const char* wireProtectName(WireProtect mode) {
  switch (mode) {
    case WireProtect::Auto:
      return "auto";
    case WireProtect::None:
      return "none";
    case WireProtect::Mac:
      return "mac";
    case WireProtect::Encrypt:
      return "encrypt";
  }
  return "?";
}

WireProtect protectionFor(WireProtect mode, LinkKind kind) {
  if (mode != WireProtect::Auto) return mode;
  return kind == LinkKind::Cable || kind == LinkKind::Loopback
             ? WireProtect::None
             : WireProtect::Encrypt;
}

}  // namespace mcl::transport::tcp
