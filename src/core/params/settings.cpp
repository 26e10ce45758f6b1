#include "core/params/settings.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "algorithms/algorithm_table.h"
#include "base/error.h"
#include "core/params/params.h"
#include "core/registry/transport_registry.h"
#include "platform/cpu.h"

namespace mcl {

namespace {

constexpr int64_t kMaxTimeoutSeconds = 24 * 3600;

int64_t autoOrInt(const char* name, const std::string& text, int64_t whenAuto) {
  if (text == "auto") return whenAuto;
  return paramInt(name, 0, 10'000'000);
}

}  // namespace

int timeoutFromEnvironment() {
  return static_cast<int>(paramInt("MCL_TIMEOUT", 1, kMaxTimeoutSeconds));
}

CommSettings loadSettings(const mclConfig_t* config) {
  CommSettings s;
  if (config != nullptr) {
    if (config->magic != MCL_CONFIG_MAGIC)
      throw error(mclInvalidArgument,
                  "config was not initialised with MCL_CONFIG_INITIALIZER "
                  "(magic 0x%x)",
                  config->magic);
    if (config->size < offsetof(mclConfig_t, commName) + sizeof(char*))
      throw error(mclInvalidArgument,
                  "config->size %zu is smaller than this mcl's mclConfig_t "
                  "(%zu): built against an older header?",
                  config->size, sizeof(mclConfig_t));
  }
  if (config != nullptr && config->timeoutSeconds != MCL_CONFIG_UNDEF_INT) {
    if (config->timeoutSeconds <= 0 ||
        config->timeoutSeconds > kMaxTimeoutSeconds)
      throw error(mclInvalidArgument,
                  "config->timeoutSeconds %d must be between 1 and %lld",
                  config->timeoutSeconds,
                  static_cast<long long>(kMaxTimeoutSeconds));
    s.timeoutSeconds = config->timeoutSeconds;
  } else {
    s.timeoutSeconds = timeoutFromEnvironment();
  }

  s.transport = config != nullptr && config->transport != nullptr
                    ? config->transport
                    : paramValue("MCL_TRANSPORT").text;
  transportsFor(s.transport);  // an unknown name fails here
  if (config != nullptr && config->commName != nullptr)
    s.name = std::string(config->commName).substr(0, 64);

  s.peerTimeoutSeconds =
      static_cast<int>(paramInt("MCL_PEER_TIMEOUT", 0, kMaxTimeoutSeconds));
  s.spin = paramValue("MCL_SPIN_US").text;
  s.yield = paramValue("MCL_YIELD_US").text;
  s.topoFile = paramValue("MCL_TOPO_FILE").text;
  // A job mlx.launch started for JACCL names its device matrix (which
  // Thunderbolt port reaches which rank) here: the same cabling as MLX.
  const char* mlxDevices = getenv("MLX_IBV_DEVICES");
  if (s.topoFile.empty() && mlxDevices != nullptr && *mlxDevices != '\0') {
    s.topoFile = mlxDevices;
    s.topoFileVar = "MLX_IBV_DEVICES";
  }
  s.topoDumpFile = paramValue("MCL_TOPO_DUMP_FILE").text;
  std::string detect = paramValue("MCL_TOPO_DETECT").text;
  if (detect != "auto" && detect != "always")
    throw error(mclInvalidArgument, "MCL_TOPO_DETECT=%s: use auto or always",
                detect.c_str());
  s.topoDetectAlways = detect == "always";
  s.topoFileForce = paramInt("MCL_TOPO_FILE_FORCE", 0, 1) == 1;
  s.algoSpec = config != nullptr &&
                       config->size >=
                           offsetof(mclConfig_t, algorithms) + sizeof(char*) &&
                       config->algorithms != nullptr
                   ? config->algorithms
                   : paramValue("MCL_ALGO").text;
  s.forced = parseAlgorithmSpec(s.algoSpec);
  const bool hasBlocking =
      config != nullptr &&
      config->size >= offsetof(mclConfig_t, blocking) + sizeof(int) &&
      config->blocking != MCL_CONFIG_UNDEF_INT;
  if (hasBlocking && config->blocking != 0 && config->blocking != 1)
    throw error(mclInvalidArgument,
                "config->blocking %d: use 1 (init, split and finalize return "
                "once done) or 0 (they return mclInProgress and finish in the "
                "background)",
                config->blocking);
  s.blocking = hasBlocking ? config->blocking == 1
                           : paramInt("MCL_COMM_BLOCKING", 0, 1) == 1;
  s.tuneProbe = paramInt("MCL_TUNE_PROBE", 0, 1) == 1;
  s.checkCalls = paramInt("MCL_CHECK", 0, 1) == 1;
  // Validate now rather than at first use.
  waitPolicyFor(s, 1);
  return s;
}

WaitPolicy waitPolicyFor(const CommSettings& s, int localRanks) {
  // With more ranks than cores, a spinning rank steals the core its peer
  // needs: hand the CPU over almost at once. Otherwise spin long enough to
  // catch a peer's next piece without paying a ~25 us wake-up.
  bool oversubscribed = localRanks > platform::onlineCpuCount();
  WaitPolicy p;
  p.spinNs = 1000 * autoOrInt("MCL_SPIN_US", s.spin, oversubscribed ? 2 : 100);
  p.yieldNs =
      1000 * autoOrInt("MCL_YIELD_US", s.yield, oversubscribed ? 2000 : 1000);
  return p;
}

}  // namespace mcl
