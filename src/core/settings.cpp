#include "core/settings.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "algorithms/algorithm_table.h"
#include "base/error.h"
#include "core/params.h"
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

void loadRdmaSettings(transport::rdma::RdmaOptions& r);

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
  if (s.transport != "auto" && s.transport != "shm" && s.transport != "tcp" &&
      s.transport != "rdma")
    throw error(mclInvalidArgument,
                "transport '%s' is unknown; use auto, shm, tcp or rdma",
                s.transport.c_str());
  loadRdmaSettings(s.rdma);
  if (config != nullptr && config->commName != nullptr)
    s.name = std::string(config->commName).substr(0, 64);

  s.shm.slotBytes =
      static_cast<uint32_t>(paramInt("MCL_SHM_SLOT_BYTES", 64, 64 << 20));
  if (s.shm.slotBytes % 64 != 0)
    throw error(mclInvalidArgument,
                "MCL_SHM_SLOT_BYTES=%u is not a multiple of 64",
                s.shm.slotBytes);
  s.shm.slots = static_cast<uint32_t>(paramInt("MCL_SHM_SLOTS", 2, 4096));
  s.shm.ringStores =
      transport::shm::ringStoresNamed(paramValue("MCL_SHM_RING_STORES").text);
  s.tcp.socketsPerLink = static_cast<int>(paramInt("MCL_TCP_NSOCKS", 1, 64));
  s.tcp.slots.slotBytes =
      static_cast<uint32_t>(paramInt("MCL_TCP_SLOT_BYTES", 64, 64 << 20));
  if (s.tcp.slots.slotBytes % 64 != 0)
    throw error(mclInvalidArgument,
                "MCL_TCP_SLOT_BYTES=%u is not a multiple of 64",
                s.tcp.slots.slotBytes);
  s.tcp.slots.slots = static_cast<uint32_t>(paramInt("MCL_TCP_SLOTS", 2, 4096));
  s.tcp.ifname = paramValue("MCL_SOCKET_IFNAME").text;
  transport::tcp::parseIfnameFilter(s.tcp.ifname);  // reject bad specs now
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
  s.algoSpec = config != nullptr &&
                       config->size >=
                           offsetof(mclConfig_t, algorithms) + sizeof(char*) &&
                       config->algorithms != nullptr
                   ? config->algorithms
                   : paramValue("MCL_ALGO").text;
  s.forced = parseAlgorithmSpec(s.algoSpec);
  s.tuneProbe = paramInt("MCL_TUNE_PROBE", 0, 1) == 1;
  s.checkCalls = paramInt("MCL_CHECK", 0, 1) == 1;
  // Validate now rather than at first use.
  waitPolicyFor(s, 1);
  return s;
}

void loadRdmaSettings(transport::rdma::RdmaOptions& r) {
  r.provider.provider = paramValue("MCL_RDMA_PROVIDER").text;
  if (r.provider.provider != "ibverbs" && r.provider.provider != "emu")
    throw error(mclInvalidArgument,
                "MCL_RDMA_PROVIDER=%s is unknown: use ibverbs or emu",
                r.provider.provider.c_str());
  r.provider.library = paramValue("MCL_RDMA_LIBRARY").text;
  r.provider.emuFabric = paramValue("MCL_EMU_FABRIC").text;
  r.provider.emuFaults = paramValue("MCL_EMU_FAULTS").text;
  r.provider.emuLatencyUs =
      static_cast<double>(paramInt("MCL_EMU_LATENCY_US", 0, 1000000));
  r.provider.emuGbps = static_cast<double>(paramInt("MCL_EMU_GBPS", 1, 10000));
  r.shape.frameBytes =
      static_cast<uint32_t>(paramInt("MCL_RDMA_FRAME_BYTES", 128, 1 << 20));
  r.shape.depth = static_cast<int>(paramInt("MCL_RDMA_DEPTH", 8, 1024));
  r.devices.clear();
  const std::string devices = paramValue("MCL_RDMA_DEVICES").text;
  for (size_t start = 0; start <= devices.size();) {
    size_t comma = devices.find(',', start);
    if (comma == std::string::npos) comma = devices.size();
    if (comma > start)
      r.devices.push_back(devices.substr(start, comma - start));
    start = comma + 1;
  }
  ParamValue qp = paramValue("MCL_RDMA_QP");
  if (qp.text == "uc")
    r.qpType = transport::rdma::QpType::UC;
  else if (qp.text == "rc")
    r.qpType = transport::rdma::QpType::RC;
  else
    throw error(mclInvalidArgument, "MCL_RDMA_QP=%s: use uc or rc",
                qp.text.c_str());
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
