// MCL_PORT_RANGE: the ports every mcl listener of this process may take
// (the rendezvous root without MCL_ROOT, the side channel, the TCP
// transport), for hosts whose firewall opens only some.
#pragma once

#include "base/param_source.h"
#include "platform/socket.h"

namespace mcl {

// "" is any port; "first-last" within 1..65535. Anything else throws
// mclInvalidArgument naming the variable.
platform::PortRange portRangeSetting(const ParamSource& params);

}  // namespace mcl
