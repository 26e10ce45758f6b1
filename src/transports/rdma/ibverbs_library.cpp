#include "transports/rdma/ibverbs_library.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include "base/error.h"

namespace mcl::transport::rdma::ibv {

#ifdef __APPLE__
constexpr const char* kInstallHint =
    "RDMA needs macOS 26.2 or later with RDMA enabled from recoveryOS "
    "(`rdma_ctl enable`)";
#else
constexpr const char* kInstallHint =
    "RDMA on Linux needs rdma-core's verbs library: install libibverbs1 and "
    "ibverbs-providers (Debian/Ubuntu) or rdma-core (Fedora/RHEL)";
#endif

// Verbs report failures either as a returned errno value or as -1 (or
// NULL) with errno set; `saved` is errno right after the call.
int verbsErrno(int rc, int saved) {
  if (rc > 0) return rc;
  return saved != 0 ? saved : EIO;
}

std::string errText(int err) {
  return std::string(strerror(err)) + " (errno " + std::to_string(err) + ")";
}

[[noreturn]] void fail(const std::string& what, int err,
                       const std::string& hint) {
  throw error(mclSystemError, "%s failed: %s%s%s", what.c_str(),
              errText(err).c_str(), hint.empty() ? "" : "; ", hint.c_str());
}

std::shared_ptr<Library> loadLibrary(const std::string& library) {
#ifdef __APPLE__
  std::vector<std::string> names = {"librdma.dylib", "/usr/lib/librdma.dylib"};
#else
  std::vector<std::string> names = {"libibverbs.so.1"};
#endif
  if (!library.empty()) names = {library};
  auto lib = std::make_shared<Library>();
  std::string why;
  for (const auto& name : names) {
    lib->handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib->handle) {
      lib->name = name;
      break;
    }
    const char* e = dlerror();
    if (why.empty()) why = e ? e : "not found";
  }
  if (!lib->handle)
    throw error(mclSystemError, "cannot load the RDMA library %s: %s; %s",
                names.front().c_str(), why.c_str(), kInstallHint);
  lib->apple = std::filesystem::path(lib->name).filename() == "librdma.dylib";

  auto resolve = [&](auto& slot, const char* symbol, bool required) {
    dlerror();
    void* p = dlsym(lib->handle, symbol);
    const char* e = p ? nullptr : dlerror();
    if (!p && required)
      throw error(mclSystemError,
                  "the RDMA library %s lacks the symbol %s (%s); %s",
                  lib->name.c_str(), symbol, e ? e : "not found", kInstallHint);
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(p);
  };
#define MCL_IBV_RESOLVE(f) resolve(lib->v.f, "ibv_" #f, true);
  MCL_IBV_FUNCTIONS(MCL_IBV_RESOLVE)
#undef MCL_IBV_RESOLVE
  resolve(lib->v.wc_status_str, "ibv_wc_status_str", false);
  resolve(lib->v.query_device, "ibv_query_device", false);
  return lib;
}

// ibv_get_device_list's result, freed when the pointer goes. rdma-core
// returns NULL (ENOSYS) when the kernel has no RDMA: that is no devices.
std::shared_ptr<ibv_device*> deviceList(const Library& lib, int& count) {
  count = 0;
  ibv_device** list = lib.v.get_device_list(&count);
  if (!list) count = 0;
  return {list, [&lib](ibv_device** l) {
            if (l) lib.v.free_device_list(l);
          }};
}

// The network interface behind a device: sysfs knows it on Linux; Apple
// names each device after its interface (rdma_en2 -> en2).
std::string netdevOf(const std::string& device) {
#ifdef __linux__
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> found;
  fs::directory_iterator it("/sys/class/infiniband/" + device + "/device/net",
                            ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec))
    found.push_back(it->path().filename().string());
  if (!found.empty()) return *std::min_element(found.begin(), found.end());
#endif
  return device.rfind("rdma_", 0) == 0 ? device.substr(5) : "";
}

DeviceInfo describe(const Library& lib, ibv_device* dev) {
  DeviceInfo info;
  const char* name = lib.v.get_device_name(dev);
  info.name = name ? name : "";
  info.netdev = netdevOf(info.name);
#ifdef __APPLE__
  info.rcSupported = !lib.apple;  // Apple's RC QP creation fails (errno 102)
#else
  // usNIC and EFA-style (unspecified) transports have no RC.
  info.rcSupported = !lib.apple && (dev->transport_type == IBV_TRANSPORT_IB ||
                                    dev->transport_type == IBV_TRANSPORT_IWARP);
#endif
  if (lib.apple) {
    // Measured by others on a Mac, not stated by Apple: the 33rd receive
    // posted on one queue pair fails with ENOMEM (hellas-ai/
    // thunderbolt-ibverbs); MLX's JACCL posts 32.
    info.maxPostedRecvs = 32;
    info.recvLimitSource =
        "Apple's provider: the 33rd posted receive fails with ENOMEM";
  }
  return info;
}

int maxQpWr(const Library& lib, ibv_context* ctx) {
  if (lib.v.query_device == nullptr) return 0;  // unknown: not checked
  ibv_device_attr attr{};
  return lib.v.query_device(ctx, &attr) == 0 ? attr.max_qp_wr : 0;
}

int mtuBytes(ibv_mtu mtu) {
  int m = static_cast<int>(mtu);
  return m >= 1 && m <= 5 ? 128 << m : 1024;
}

// IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5.
ibv_mtu mtuEnum(uint32_t bytes) {
  int m = 5;
  while (m > 1 && bytes < (128u << m)) --m;
  return static_cast<ibv_mtu>(m);
}

bool isIpv4Mapped(const uint8_t* g) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return memcmp(g, prefix, sizeof(prefix)) == 0;
}

std::string gidText(const std::array<uint8_t, 16>& g) {
  if (!isIpv4Mapped(g.data())) return "not IPv4-mapped";
  char buf[32];
  snprintf(buf, sizeof(buf), "::ffff:%u.%u.%u.%u", g[12], g[13], g[14], g[15]);
  return buf;
}

// The IPv4-mapped GID exists only while the port's interface has an IPv4
// address (link-local 169.254/16 works); it comes and goes with DHCP.
// `netdev` empty: the peer's port, whose interface we do not know.
std::string gidHint(const std::string& netdev) {
  std::string nd = netdev.empty() ? "<netdev>" : netdev;
#ifdef __APPLE__
  std::string fix = "`sudo ipconfig set " + nd +
                    " DHCP` or give the cable a /30 with networksetup";
#else
  std::string fix = "`sudo ip addr add <a.b.c.d>/30 dev " + nd + "`";
#endif
  return std::string(netdev.empty() ? "the peer's" : "the") +
         " port needs an IPv4-mapped GID (::ffff:a.b.c.d), i.e. its "
         "interface " +
         nd + " needs an IPv4 address; fix" +
         (netdev.empty() ? " on the peer" : "") + ": " + fix;
}

PortInfo queryPortOf(const Device& d) {
  ibv_port_attr attr{};
  using Arg = PortAttrArg<decltype(d.lib->v.query_port)>::type;
  int rc = d.lib->v.query_port(d.ctx, kPort, reinterpret_cast<Arg>(&attr));
  if (rc != 0) fail("ibv_query_port on " + d.info.name, verbsErrno(rc, errno));
  PortInfo p;
  // ARMED and ACTIVE_DEFER are on the way to (or back to) ACTIVE.
  p.state = attr.state == IBV_PORT_ACTIVE ? PortState::Active
            : attr.state == IBV_PORT_DOWN || attr.state == IBV_PORT_NOP
                ? PortState::Down
                : PortState::Init;
  p.mtu = mtuBytes(attr.active_mtu);
  p.lid = attr.lid;
  for (int i = 0; i < attr.gid_tbl_len; ++i) {
    ibv_gid gid{};
    // Unused entries may fail or read as zero; skip them.
    if (d.lib->v.query_gid(d.ctx, kPort, i, &gid) != 0) continue;
    if (isIpv4Mapped(gid.raw)) {
      p.gidIndex = i;
      std::copy(gid.raw, gid.raw + 16, p.gid.begin());
      break;
    }
  }
  return p;
}

}  // namespace mcl::transport::rdma::ibv
