#include "transports/rdma/rdma_options.h"

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "base/error.h"
#include "topology/device_matrix.h"

namespace mcl::transport::rdma {

namespace {

constexpr ParamDef kParams[] = {
    {"MCL_RDMA_PROVIDER", "ibverbs",
     "ibverbs: the system's verbs library; emu: the emulated Thunderbolt "
     "fabric MCL_EMU_FABRIC describes (tests)."},
    {"MCL_RDMA_LIBRARY", "",
     "The verbs library to load (default librdma.dylib on macOS, "
     "libibverbs.so.1 on Linux)."},
    {"MCL_RDMA_FRAME_BYTES", "4096",
     "Bytes per RDMA frame (64-byte header included), a multiple of 64."},
    {"MCL_RDMA_DEPTH", "32",
     "Receives (and sends) posted per RDMA wire; at most 32 on Apple's "
     "provider (the 33rd posted receive fails with ENOMEM)."},
    {"MCL_RDMA_QP", "uc", "Queue-pair type: uc (Thunderbolt) or rc."},
    {"MCL_RDMA_INLINE", "0",
     "1: ask queue pairs for 64 bytes of inline data and send small frames "
     "inline where granted. Off by default: Apple's provider is known to "
     "work without it (MLX's JACCL sets max_inline_data = 0)."},
    {"MCL_RDMA_DEVICES", "",
     "RDMA devices this rank may use, comma-separated ('rdma_en2,rdma_en3'); "
     "cables on other devices are left out. Empty: every cabled device. "
     "Both ends of a pair must keep the same cables (mcl-perf qualify "
     "tests one cable at a time this way)."},
    {"MCL_EMU_FABRIC", "",
     "The emulated fabric's cabling: a JACCL device matrix, one row per "
     "rank."},
    {"MCL_EMU_LATENCY_US", "2", "Emulated cable latency, one way."},
    {"MCL_EMU_GBPS", "60", "Emulated cable bandwidth per direction, Gb/s."},
    {"MCL_EMU_MACOS", "26.2",
     "The macOS release whose provider rules the emulated fabric keeps "
     "(frames over 4096 bytes need 26.3)."},
    {"MCL_EMU_RC", "0",
     "1: the emulated provider also makes RC queue pairs (Apple's makes UC "
     "only)."},
    {"MCL_EMU_FAULTS", "",
     "Emulated faults, comma-separated: port_down:MAC:DEVICE@MS takes that "
     "cable down MS after init; silent:MAC:DEVICE@MS makes it lose every "
     "frame from then on, its ports staying up; drop:RATE, dup:RATE and "
     "delay:RATE:US "
     "(each optionally :MAC:DEVICE for one cable) drop, duplicate or hold "
     "back frames; drop@N:MAC:DEVICE, dup@N:MAC:DEVICE and "
     "wc_error@N:MAC:DEVICE hit the Nth frame that end sends."},
};

}  // namespace

ParamTable rdmaParams() { return kParams; }

EmuCabling loadEmuCabling(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw error(mclInvalidArgument, "MCL_EMU_FABRIC=%s: cannot open it",
                path.c_str());
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return topology::parseDeviceMatrix(text.str()).devices;
  } catch (const Error& e) {
    throw error(mclInvalidArgument, "MCL_EMU_FABRIC=%s: %s", path.c_str(),
                e.what());
  }
}

RdmaOptions loadRdmaOptions(const ParamSource& params) {
  RdmaOptions r;
  r.provider.provider = params.text("MCL_RDMA_PROVIDER");
  if (r.provider.provider != "ibverbs" && r.provider.provider != "emu")
    throw error(mclInvalidArgument,
                "MCL_RDMA_PROVIDER=%s is unknown: use ibverbs or emu",
                r.provider.provider.c_str());
  r.provider.library = params.text("MCL_RDMA_LIBRARY");
  r.provider.emuFabric = params.text("MCL_EMU_FABRIC");
  if (r.provider.provider == "emu") {
    if (r.provider.emuFabric.empty())
      throw error(mclInvalidArgument,
                  "MCL_RDMA_PROVIDER=emu needs MCL_EMU_FABRIC: the path of a "
                  "JACCL device-matrix JSON file saying which rdma_enX of "
                  "which Mac (rank) is cabled to which");
    r.provider.emuCabling = loadEmuCabling(r.provider.emuFabric);
  }
  r.provider.emuFaults = params.text("MCL_EMU_FAULTS");
  r.provider.emuMacos = params.text("MCL_EMU_MACOS");
  r.provider.emuRc = params.integer("MCL_EMU_RC", 0, 1) != 0;
  r.inlineSends = params.integer("MCL_RDMA_INLINE", 0, 1) != 0;
  r.provider.emuLatencyUs =
      static_cast<double>(params.integer("MCL_EMU_LATENCY_US", 0, 1000000));
  r.provider.emuGbps =
      static_cast<double>(params.integer("MCL_EMU_GBPS", 1, 10000));
  r.shape.frameBytes = static_cast<uint32_t>(
      params.integer("MCL_RDMA_FRAME_BYTES", 128, 1 << 20));
  r.shape.depth = static_cast<int>(params.integer("MCL_RDMA_DEPTH", 8, 1024));
  const std::string devices = params.text("MCL_RDMA_DEVICES");
  for (size_t start = 0; start <= devices.size();) {
    size_t comma = devices.find(',', start);
    if (comma == std::string::npos) comma = devices.size();
    if (comma > start)
      r.devices.push_back(devices.substr(start, comma - start));
    start = comma + 1;
  }
  const std::string qp = params.text("MCL_RDMA_QP");
  if (qp == "uc")
    r.qpType = QpType::UC;
  else if (qp == "rc")
    r.qpType = QpType::RC;
  else
    throw error(mclInvalidArgument, "MCL_RDMA_QP=%s: use uc or rc", qp.c_str());
  return r;
}

}  // namespace mcl::transport::rdma
