// The system's verbs library as mcl loads it (dlopen + dlsym into a
// function table), and the small helpers the ibverbs provider's objects
// share: errors, device listing, ports and GIDs. Internal to
// ibverbs_provider.cpp and ibverbs_library.cpp; needs <infiniband/verbs.h>.
#pragma once

#include <dlfcn.h>
#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "transports/rdma/verbs.h"

namespace mcl::transport::rdma::ibv {

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
  X(close_device) X(query_port) X(query_gid) X(alloc_pd) X(dealloc_pd)     \
  X(reg_mr) X(dereg_mr) X(create_cq) X(destroy_cq) X(create_qp)            \
  X(destroy_qp) X(modify_qp)
// clang-format on

// Naming a verb only for its type is no use of it: if an SDK marks the
// verbs as newer than the deployment target, the pointers still come from
// dlsym alone (and stay null where the library is absent).
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunguarded-availability-new"
#endif
struct Verbs {
#define MCL_IBV_MEMBER(f) decltype(&::ibv_##f) f = nullptr;
  MCL_IBV_FUNCTIONS(MCL_IBV_MEMBER)
#undef MCL_IBV_MEMBER
  // Optional, null when absent: the text of failed completions, and the
  // device's limits (MLX's JACCL never loads ibv_query_device, so Apple's
  // library is not known to have it; without it the queue depth is not
  // checked against the device before the queue pair is made).
  decltype(&::ibv_wc_status_str) wc_status_str = nullptr;
  decltype(&::ibv_query_device) query_device = nullptr;
};
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

constexpr uint8_t kPort = 1;  // one port per Thunderbolt device

// Memory-region and queue-pair access as MLX's JACCL sets them on Apple's
// provider, the only settings known to work there; mcl itself needs only
// LOCAL_WRITE (receives write into its frames).
constexpr int kAccessFlags =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;

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

// Verbs report failures either as a returned errno value or as -1 (or
// NULL) with errno set; `saved` is errno right after the call.
int verbsErrno(int rc, int saved);
std::string errText(int err);
[[noreturn]] void fail(const std::string& what, int err,
                       const std::string& hint = "");

// `library` empty: the platform's default. Throws naming what is missing.
std::shared_ptr<Library> loadLibrary(const std::string& library);
// The device list (freed with the pointer) and its length.
std::shared_ptr<ibv_device*> deviceList(const Library& lib, int& count);
DeviceInfo describe(const Library& lib, ibv_device* dev);
int maxQpWr(const Library& lib, ibv_context* ctx);

int mtuBytes(ibv_mtu mtu);
ibv_mtu mtuEnum(uint32_t bytes);
bool isIpv4Mapped(const uint8_t* g);
std::string gidText(const std::array<uint8_t, 16>& g);
// What fixes a missing IPv4-mapped GID; `netdev` empty: the peer's port.
std::string gidHint(const std::string& netdev);
PortInfo queryPortOf(const Device& d);

}  // namespace mcl::transport::rdma::ibv
