// A communicator's settings: mclConfig_t fields where set, else the
// environment (params.h), else defaults, all validated up front so a bad
// value fails init with a message naming it.
#pragma once

#include <mcl/mcl.h>

#include <string>

#include "algorithms/context.h"

namespace mcl {

struct CommSettings {
  int timeoutSeconds = 300;
  int peerTimeoutSeconds = 10;  // MCL_PEER_TIMEOUT; 0: no side channel
  // MCL_TRANSPORT: "auto" or a transport's name (transport_registry.h);
  // each transport reads its own settings (transports/*/..._options.h).
  std::string transport = "auto";
  std::string name;
  std::string spin = "auto";   // MCL_SPIN_US
  std::string yield = "auto";  // MCL_YIELD_US
  std::string topoFile;        // MCL_TOPO_FILE, else MLX_IBV_DEVICES
  std::string topoFileVar = "MCL_TOPO_FILE";  // which of the two it came from
  std::string topoDumpFile;                   // MCL_TOPO_DUMP_FILE
  bool topoDetectAlways = false;              // MCL_TOPO_DETECT=always
  bool topoFileForce = false;                 // MCL_TOPO_FILE_FORCE=1
  std::string algoSpec;                       // MCL_ALGO as given
  ForcedAlgorithms forced{};                  // MCL_ALGO parsed
  bool tuneProbe = false;                     // MCL_TUNE_PROBE=1
  bool checkCalls = false;                    // MCL_CHECK=1
  // config->blocking, else MCL_COMM_BLOCKING: 0 makes init, split and
  // finalize return mclInProgress and finish in the background.
  bool blocking = true;
};

// Throws mclInvalidArgument naming the field or variable.
CommSettings loadSettings(const mclConfig_t* config);

// The adaptive-wait budget, given how many ranks share this host's cores.
WaitPolicy waitPolicyFor(const CommSettings& settings, int localRanks);

// MCL_TIMEOUT alone, for the rendezvous root.
int timeoutFromEnvironment();

}  // namespace mcl
