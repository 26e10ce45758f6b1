#include "transports/rdma/ibverbs_provider.h"

#include <dlfcn.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <type_traits>
#include <vector>

#include "base/error.h"

namespace mcl::transport::rdma {
namespace {

// Every exported verb mcl calls, resolved with dlsym so that mcl never
// references the library at link time. ibv_post_send, ibv_post_recv and
// ibv_poll_cq are inline in the header (through the context's ops) and need
// no entry. rdma-core's header turns ibv_query_port, ibv_reg_mr and
// ibv_get_device_list into function-like macros around inline wrappers;
// naming them without a following '(' reaches the exported functions. The
// list keeps to the classic verbs that Apple's librdma.dylib exports too.
// clang-format off
#define MCL_IBV_FUNCTIONS(X)                                               \
  X(get_device_list) X(free_device_list) X(get_device_name) X(open_device) \
  X(close_device) X(query_device) X(query_port) X(query_gid) X(alloc_pd)   \
  X(dealloc_pd) X(reg_mr) X(dereg_mr) X(create_cq) X(destroy_cq)          \
  X(create_qp) X(destroy_qp) X(modify_qp)
// clang-format on

struct Verbs {
#define MCL_IBV_MEMBER(f) decltype(&::ibv_##f) f = nullptr;
  MCL_IBV_FUNCTIONS(MCL_IBV_MEMBER)
#undef MCL_IBV_MEMBER
  // Optional (only the text of failed completions): null when absent.
  decltype(&::ibv_wc_status_str) wc_status_str = nullptr;
};

constexpr uint8_t kPort = 1;           // one port per Thunderbolt device
constexpr uint32_t kInlineBytes = 64;  // asked for; the QP may grant less

// The exported ibv_query_port takes rdma-core's `_compat_ibv_port_attr`
// (the pre-extension layout) while the header's inline wrapper passes a
// full ibv_port_attr; we do the same through whatever type is declared.
template <typename F>
struct PortAttrArg;
template <typename R, typename C, typename P, typename A>
struct PortAttrArg<R (*)(C, P, A)> {
  using type = A;
};

// The loaded library. Everything made from it holds it, so dlclose runs
// after the last verbs object is released.
struct Library {
  void* handle = nullptr;
  std::string name;
  bool apple = false;  // Apple's provider: UC only
  Verbs v;
  ~Library() {
    if (handle) dlclose(handle);
  }
};

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
                       const std::string& hint = "") {
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
  return info;
}

int maxQpWr(const Library& lib, ibv_context* ctx) {
  ibv_device_attr attr{};
  return lib.v.query_device(ctx, &attr) == 0 ? attr.max_qp_wr : 0;
}

// An opened device with its protection domain.
struct Device {
  std::shared_ptr<Library> lib;
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  DeviceInfo info;
  ~Device() {
    if (pd) lib->v.dealloc_pd(pd);
    if (ctx) lib->v.close_device(ctx);
  }
};

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

class IbvMemoryRegion : public MemoryRegion {
 public:
  IbvMemoryRegion(std::shared_ptr<Device> d, ibv_mr* mr)
      : d_(std::move(d)), mr_(mr) {}
  ~IbvMemoryRegion() override { d_->lib->v.dereg_mr(mr_); }
  uint32_t lkey() const override { return mr_->lkey; }

 private:
  std::shared_ptr<Device> d_;
  ibv_mr* mr_;
};

class IbvCompletionQueue : public CompletionQueue {
 public:
  // The CQ is shared with the QPs completing on it (a CQ cannot be
  // destroyed while a QP uses it); its deleter keeps the device alive.
  IbvCompletionQueue(std::shared_ptr<Device> d, ibv_cq* cq)
      : d_(d), cq_(cq, [d](ibv_cq* c) { d->lib->v.destroy_cq(c); }) {}
  const std::shared_ptr<Device>& device() const { return d_; }
  const std::shared_ptr<ibv_cq>& cq() const { return cq_; }

  int poll(Completion* out, int max) override {
    constexpr int kBatch = 16;
    ibv_wc wc[kBatch];
    int total = 0;
    while (total < max) {
      int want = std::min(max - total, kBatch);
      int n = ibv_poll_cq(cq_.get(), want, wc);
      if (n < 0) fail("ibv_poll_cq on " + d_->info.name, verbsErrno(n, errno));
      for (int i = 0; i < n; ++i) fill(wc[i], out[total + i]);
      total += n;
      if (n < want) break;
    }
    return total;
  }

 private:
  void fill(const ibv_wc& wc, Completion& c) const {
    c.wrId = wc.wr_id;
    c.ok = wc.status == IBV_WC_SUCCESS;
    // opcode and byte_len are defined only for successful completions.
    c.recv = c.ok && (wc.opcode & IBV_WC_RECV) != 0;
    c.bytes = c.ok ? wc.byte_len : 0;
    c.error.clear();
    if (c.ok) return;
    const auto& v = d_->lib->v;
    const char* text = v.wc_status_str ? v.wc_status_str(wc.status) : nullptr;
    char buf[160];
    snprintf(buf, sizeof(buf), "%s (status %d, vendor error 0x%x)",
             text ? text : "failed completion", static_cast<int>(wc.status),
             wc.vendor_err);
    c.error = buf;
  }

  std::shared_ptr<Device> d_;
  std::shared_ptr<ibv_cq> cq_;
};

ibv_sge sgeOf(const MemoryRegion& mr, const void* data, uint32_t bytes) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uintptr_t>(data);
  sge.length = bytes;
  sge.lkey = mr.lkey();
  return sge;
}

uint32_t randomPsn() {
  thread_local std::mt19937 gen{std::random_device{}()};
  return gen() & 0xffffff;
}

class IbvQueuePair : public QueuePair {
 public:
  IbvQueuePair(std::shared_ptr<Device> d, std::shared_ptr<ibv_cq> cq,
               ibv_qp* qp, QpType type, uint32_t maxInline)
      : d_(std::move(d)),
        cq_(std::move(cq)),
        qp_(qp),
        type_(type),
        maxInline_(maxInline),
        psn_(randomPsn()) {}
  ~IbvQueuePair() override { d_->lib->v.destroy_qp(qp_); }

  // RESET -> INIT, so receives can be posted before connect().
  void init() {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = kPort;
    a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
    if (int err = modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                IBV_QP_ACCESS_FLAGS))
      fail(what("INIT"), err);
  }

  QpAddress address() const override {
    // Read the GID now and remember its index: connect() must use the
    // source GID the peer was told about.
    port_ = queryPortOf(*d_);
    havePort_ = true;
    QpAddress a;
    a.gid = port_.gid;
    a.qpn = qp_->qp_num;
    a.psn = psn_;
    a.lid = port_.lid;
    a.mtu = static_cast<uint32_t>(port_.mtu);
    return a;
  }

  void connect(const QpAddress& remote) override {
    const DeviceInfo& info = d_->info;
    if (connected_)
      throw error(mclInvalidArgument, "QP %u on %s is already connected",
                  qp_->qp_num, info.name.c_str());
    if (!havePort_) address();
    if (port_.gidIndex < 0)
      throw error(mclSystemError, "cannot connect QP %u on %s: %s", qp_->qp_num,
                  info.name.c_str(), gidHint(info.netdev).c_str());
    bool rc = type_ == QpType::RC;

    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = mtuEnum(std::min<uint32_t>(port_.mtu, remote.mtu));
    a.dest_qp_num = remote.qpn;
    a.rq_psn = remote.psn & 0xffffff;
    a.ah_attr.is_global = 1;
    std::copy(remote.gid.begin(), remote.gid.end(), a.ah_attr.grh.dgid.raw);
    a.ah_attr.grh.sgid_index = static_cast<uint8_t>(port_.gidIndex);
    a.ah_attr.grh.hop_limit = 1;
    a.ah_attr.dlid = remote.lid;
    a.ah_attr.port_num = kPort;
    int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
               IBV_QP_RQ_PSN;
    if (rc) {
      a.max_dest_rd_atomic = 1;
      a.min_rnr_timer = 12;
      mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    }
    // Apple's provider answers EINVAL when a side lacks the IPv4-mapped GID.
    if (int err = modify(a, mask))
      fail(what("RTR", ", GID index " + std::to_string(port_.gidIndex) +
                           ", peer GID " + gidText(remote.gid)),
           err,
           err != EINVAL                     ? ""
           : isIpv4Mapped(remote.gid.data()) ? gidHint(info.netdev)
                                             : gidHint(""));

    a = ibv_qp_attr{};
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = psn_;
    mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
    if (rc) {
      a.timeout = 14;
      a.retry_cnt = 7;
      a.rnr_retry = 7;
      a.max_rd_atomic = 1;
      mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
              IBV_QP_MAX_QP_RD_ATOMIC;
    }
    if (int err = modify(a, mask)) fail(what("RTS"), err);
    connected_ = true;
  }

  void postSend(uint64_t wrId, const MemoryRegion& mr, const std::byte* data,
                uint32_t bytes) override {
    if (!connected_)
      throw error(mclInternalError, "send on QP %u of %s before connect",
                  qp_->qp_num, d_->info.name.c_str());
    ibv_sge sge = sgeOf(mr, data, bytes);
    ibv_send_wr wr{};
    wr.wr_id = wrId;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    // Inline copies small payloads into the work request, sparing the
    // adapter a DMA read.
    unsigned flags = IBV_SEND_SIGNALED;
    if (maxInline_ > 0 && bytes <= maxInline_) flags |= IBV_SEND_INLINE;
    wr.send_flags = flags;
    ibv_send_wr* bad = nullptr;
    if (int rc = ibv_post_send(qp_, &wr, &bad))
      fail("ibv_post_send on " + where() + ")", verbsErrno(rc, errno),
           "the send queue is full or the QP is not ready");
  }

  void postRecv(uint64_t wrId, const MemoryRegion& mr, std::byte* data,
                uint32_t bytes) override {
    ibv_sge sge = sgeOf(mr, data, bytes);
    ibv_recv_wr wr{};
    wr.wr_id = wrId;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    if (int rc = ibv_post_recv(qp_, &wr, &bad))
      fail("ibv_post_recv on " + where() + ")", verbsErrno(rc, errno),
           "the receive queue is full or the QP is not ready");
  }

 private:
  int modify(ibv_qp_attr& a, int mask) {
    errno = 0;
    int rc = d_->lib->v.modify_qp(qp_, &a, mask);
    return rc == 0 ? 0 : verbsErrno(rc, errno);
  }
  // "rdma_en2 (UC QP 7", for messages to close.
  std::string where() const {
    return d_->info.name + " (" + (type_ == QpType::RC ? "RC" : "UC") + " QP " +
           std::to_string(qp_->qp_num);
  }
  std::string what(const char* state, const std::string& more = "") const {
    return std::string("ibv_modify_qp to ") + state + " on " + where() + more +
           ")";
  }

  std::shared_ptr<Device> d_;
  std::shared_ptr<ibv_cq> cq_;
  ibv_qp* qp_;
  QpType type_;
  uint32_t maxInline_;
  uint32_t psn_;
  bool connected_ = false;
  mutable bool havePort_ = false;
  mutable PortInfo port_;
};

class IbvDeviceContext : public DeviceContext {
 public:
  explicit IbvDeviceContext(std::shared_ptr<Device> d) : d_(std::move(d)) {}
  const DeviceInfo& info() const override { return d_->info; }
  PortInfo queryPort() override { return queryPortOf(*d_); }

  std::unique_ptr<MemoryRegion> registerMemory(void* data,
                                               size_t bytes) override {
    // REMOTE_WRITE keeps the region usable for RDMA WRITE later.
    errno = 0;
    ibv_mr* mr = d_->lib->v.reg_mr(
        d_->pd, data, bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!mr)
      fail("ibv_reg_mr of " + std::to_string(bytes) + " bytes on " +
               d_->info.name,
           verbsErrno(0, errno));
    return std::make_unique<IbvMemoryRegion>(d_, mr);
  }

  std::unique_ptr<CompletionQueue> createCompletionQueue(int depth) override {
    errno = 0;
    ibv_cq* cq = d_->lib->v.create_cq(d_->ctx, depth, nullptr, nullptr, 0);
    if (!cq)
      fail("ibv_create_cq of depth " + std::to_string(depth) + " on " +
               d_->info.name,
           verbsErrno(0, errno));
    return std::make_unique<IbvCompletionQueue>(d_, cq);
  }

  std::unique_ptr<QueuePair> createQueuePair(CompletionQueue& cq,
                                             const QpOptions& o) override {
    const DeviceInfo& info = d_->info;
    auto* icq = dynamic_cast<IbvCompletionQueue*>(&cq);
    if (!icq || icq->device() != d_)
      throw error(mclInvalidArgument,
                  "createQueuePair on %s: the completion queue was not made "
                  "on this device",
                  info.name.c_str());
    bool rc = o.type == QpType::RC;
    ibv_qp_init_attr ia{};
    ia.send_cq = ia.recv_cq = icq->cq().get();
    ia.qp_type = rc ? IBV_QPT_RC : IBV_QPT_UC;
    ia.cap.max_send_wr = static_cast<uint32_t>(o.sendDepth);
    ia.cap.max_recv_wr = static_cast<uint32_t>(o.recvDepth);
    ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
    ibv_qp_init_attr plain = ia;
    ia.cap.max_inline_data = kInlineBytes;
    errno = 0;
    ibv_qp* qp = d_->lib->v.create_qp(d_->pd, &ia);
    uint32_t asked = kInlineBytes;
    if (!qp) {
      // A provider without inline sends may refuse the request outright.
      ia = plain;
      asked = 0;
      errno = 0;
      qp = d_->lib->v.create_qp(d_->pd, &ia);
    }
    if (!qp) {
      char what[160];
      snprintf(what, sizeof(what),
               "ibv_create_qp (%s, send %d, recv %d; the device allows %d) "
               "on %s",
               rc ? "RC" : "UC", o.sendDepth, o.recvDepth, info.maxQpWr,
               info.name.c_str());
      fail(what, verbsErrno(0, errno),
           !rc              ? ""
           : d_->lib->apple ? "the device supports UC queue pairs only "
                              "(Apple's Thunderbolt RDMA cannot make RC)"
                            : "the device may support UC queue pairs only");
    }
    // The provider reports what it granted; inline only within both.
    uint32_t maxInline = std::min(asked, ia.cap.max_inline_data);
    auto q =
        std::make_unique<IbvQueuePair>(d_, icq->cq(), qp, o.type, maxInline);
    q->init();
    return q;
  }

 private:
  std::shared_ptr<Device> d_;
};

class IbvProvider : public Provider {
 public:
  explicit IbvProvider(std::shared_ptr<Library> lib) : lib_(std::move(lib)) {}
  const char* name() const override { return "ibverbs"; }
  bool emulated() const override { return false; }

  std::vector<DeviceInfo> devices() override {
    int n = 0;
    auto list = deviceList(*lib_, n);
    std::vector<DeviceInfo> out;
    for (int i = 0; i < n; ++i) {
      DeviceInfo info = describe(*lib_, list.get()[i]);
      // One unhealthy device must not fail the listing: its queue limit
      // just stays unknown (0).
      if (ibv_context* ctx = lib_->v.open_device(list.get()[i])) {
        info.maxQpWr = maxQpWr(*lib_, ctx);
        lib_->v.close_device(ctx);
      }
      out.push_back(std::move(info));
    }
    return out;
  }

  std::unique_ptr<DeviceContext> open(const std::string& device) override {
    int n = 0;
    auto list = deviceList(*lib_, n);
    ibv_device* dev = nullptr;
    std::string names;
    for (int i = 0; i < n; ++i) {
      const char* name = lib_->v.get_device_name(list.get()[i]);
      if (name && device == name) dev = list.get()[i];
      names += (names.empty() ? "" : ", ") + std::string(name ? name : "?");
    }
    if (!dev) {
      std::string known =
          !names.empty() ? "the devices are " + names
          : lib_->apple  ? "there are none (check `rdma_ctl status`; RDMA "
                           "needs Thunderbolt 5, and devices can be missing "
                           "after boot until a reboot)"
                         : "there are none (see `ibv_devices`)";
      throw error(mclInvalidArgument, "no RDMA device named \"%s\": %s",
                  device.c_str(), known.c_str());
    }
    auto d = std::make_shared<Device>();
    d->lib = lib_;
    d->info = describe(*lib_, dev);
    const std::string portDown =
        "the port may be down (a port in PORT_DOWN makes ibv_alloc_pd fail): "
        "check the cable on " +
        (d->info.netdev.empty() ? device : d->info.netdev);
    errno = 0;
    d->ctx = lib_->v.open_device(dev);
    if (!d->ctx)
      fail("ibv_open_device(" + device + ")", verbsErrno(0, errno), portDown);
    d->info.maxQpWr = maxQpWr(*lib_, d->ctx);
    errno = 0;
    d->pd = lib_->v.alloc_pd(d->ctx);
    if (!d->pd)
      fail("ibv_alloc_pd on " + device, verbsErrno(0, errno), portDown);
    return std::make_unique<IbvDeviceContext>(std::move(d));
  }

 private:
  std::shared_ptr<Library> lib_;
};

}  // namespace

std::unique_ptr<Provider> openIbverbsProvider(const std::string& library) {
  return std::make_unique<IbvProvider>(loadLibrary(library));
}

}  // namespace mcl::transport::rdma
