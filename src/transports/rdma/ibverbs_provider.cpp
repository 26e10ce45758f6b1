#include "transports/rdma/ibverbs_provider.h"

#include <dlfcn.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/error.h"
#include "platform/os_version.h"
#include "transports/rdma/ibverbs_library.h"

namespace mcl::transport::rdma {
namespace {

using namespace ibv;  // NOLINT: this file is the library's one user

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
    a.qp_access_flags = kAccessFlags;
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
    // The caller registers page-aligned memory (PageBuffer), as JACCL does.
    errno = 0;
    ibv_mr* mr = d_->lib->v.reg_mr(d_->pd, data, bytes, kAccessFlags);
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
    // 0 unless MCL_RDMA_INLINE=1: JACCL asks for none on Apple's provider.
    ia.cap.max_inline_data = o.inlineBytes;
    errno = 0;
    ibv_qp* qp = d_->lib->v.create_qp(d_->pd, &ia);
    if (!qp) {
      char what[200];
      snprintf(what, sizeof(what),
               "ibv_create_qp (%s, send %d, recv %d, inline %u; the device "
               "allows %d) on %s",
               rc ? "RC" : "UC", o.sendDepth, o.recvDepth, o.inlineBytes,
               info.maxQpWr, info.name.c_str());
      fail(what, verbsErrno(0, errno),
           !rc              ? ""
           : d_->lib->apple ? "the device supports UC queue pairs only "
                              "(Apple's Thunderbolt RDMA cannot make RC)"
                            : "the device may support UC queue pairs only");
    }
    // The provider reports what it granted; inline only within both.
    uint32_t maxInline = std::min(o.inlineBytes, ia.cap.max_inline_data);
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
  FrameLimit frameLimit() const override {
    if (!lib_->apple) return {};
    // Apple's provider carries frames over 4 KiB only from macOS 26.3
    // (MLX's JACCL allows them from there): asked of the running system,
    // not the SDK mcl was built with.
    std::optional<platform::OsVersion> v = platform::macosVersion();
    if (v && v->atLeast(26, 3)) return {};
    return {4096, v ? "this Mac runs macOS " + v->text() +
                          ", and frames over 4096 bytes need macOS 26.3"
                    : "the macOS version is unknown, and frames over 4096 "
                      "bytes need macOS 26.3"};
  }

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
