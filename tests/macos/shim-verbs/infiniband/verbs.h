/*
 * SHIM for scripts/check-macos.sh only: NOT Apple's header. For compile
 * checks only: nothing may include it outside that script's compile, and
 * nothing built with it may run.
 *
 * It stands in for <infiniband/verbs.h> of the macOS 26.2 SDK, absent from
 * the check's SDK (Zig 0.11's, macOS 13), so that mcl's RDMA sources
 * (src/transports/rdma/ibverbs_*, tests/unit/ibverbs_provider_test.cpp)
 * compile for arm64-apple-macos. The declarations are written from
 * rdma-core's documented libibverbs API (names, member types and order,
 * enumerator values), the API that Apple's librdma.dylib exposes (Apple
 * TN3205: "an RDMA Verbs compatible API") as MLX's JACCL uses it: classic
 * verbs exported by the library; ibv_post_send, ibv_post_recv and
 * ibv_poll_cq inline through context->ops. Only what mcl uses is declared
 * ("..." marks what is left out), so struct sizes are not Apple's; which
 * rdma-core release Apple follows is not public (layouts: rdma-core v44).
 *
 * Knobs, for the forms Apple's header might take:
 *   MCL_VERBS_SHIM_AVAILABILITY: the exported verbs get
 *     availability(macos, introduced=26.2). Off by default: no public
 *     evidence shows Apple annotating them.
 *   MCL_VERBS_SHIM_PLAIN: no function-like macro ibv_query_port, and the
 *     exported ibv_query_port takes ibv_port_attr.
 */
#ifndef MCL_SHIM_INFINIBAND_VERBS_H
#define MCL_SHIM_INFINIBAND_VERBS_H

/* Apple's header is an SDK (system) header; so is this one. */
#pragma clang system_header

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Only passed around by mcl (on Apple it never reads ibv_device). */
struct ibv_device;
struct ibv_comp_channel;
struct ibv_srq;
struct _compat_ibv_port_attr; /* the library's pre-extension port layout */

/* clang-format off */
enum ibv_mtu { /* 128 << value bytes */
  IBV_MTU_256 = 1, IBV_MTU_512 = 2, IBV_MTU_1024 = 3, IBV_MTU_2048 = 4,
  IBV_MTU_4096 = 5
};
enum ibv_port_state {
  IBV_PORT_NOP = 0, IBV_PORT_DOWN = 1, IBV_PORT_INIT = 2, IBV_PORT_ARMED = 3,
  IBV_PORT_ACTIVE = 4, IBV_PORT_ACTIVE_DEFER = 5
};
enum ibv_wc_status { IBV_WC_SUCCESS = 0 /* ... the error statuses */ };
/* Receive completions are IBV_WC_RECV and up (bit 7 set). */
enum ibv_wc_opcode { IBV_WC_SEND = 0, /* ... */ IBV_WC_RECV = 1 << 7 };
enum ibv_access_flags {
  IBV_ACCESS_LOCAL_WRITE = 1,
  IBV_ACCESS_REMOTE_WRITE = 1 << 1,
  IBV_ACCESS_REMOTE_READ = 1 << 2 /* ... */
};
enum ibv_qp_type { IBV_QPT_RC = 2, IBV_QPT_UC = 3 /* ... */ };
enum ibv_qp_state {
  IBV_QPS_RESET = 0, IBV_QPS_INIT = 1, IBV_QPS_RTR = 2, IBV_QPS_RTS = 3
  /* ... */
};
enum ibv_mig_state { IBV_MIG_MIGRATED = 0 /* ... */ };
enum ibv_qp_attr_mask {
  IBV_QP_STATE = 1 << 0, IBV_QP_ACCESS_FLAGS = 1 << 3,
  IBV_QP_PKEY_INDEX = 1 << 4, IBV_QP_PORT = 1 << 5, IBV_QP_AV = 1 << 7,
  IBV_QP_PATH_MTU = 1 << 8, IBV_QP_TIMEOUT = 1 << 9,
  IBV_QP_RETRY_CNT = 1 << 10, IBV_QP_RNR_RETRY = 1 << 11,
  IBV_QP_RQ_PSN = 1 << 12, IBV_QP_MAX_QP_RD_ATOMIC = 1 << 13,
  IBV_QP_MIN_RNR_TIMER = 1 << 15, IBV_QP_SQ_PSN = 1 << 16,
  IBV_QP_MAX_DEST_RD_ATOMIC = 1 << 17, IBV_QP_DEST_QPN = 1 << 20 /* ... */
};
enum ibv_wr_opcode { IBV_WR_SEND = 2 /* ... */ };
enum ibv_send_flags { IBV_SEND_SIGNALED = 1 << 1, IBV_SEND_INLINE = 1 << 3 };

union ibv_gid {
  uint8_t raw[16];
  struct { uint64_t subnet_prefix, interface_id; } global; /* big-endian */
};
struct ibv_device_attr {
  char fw_ver[64];
  uint64_t node_guid, sys_image_guid, max_mr_size, page_size_cap;
  uint32_t vendor_id, vendor_part_id, hw_ver;
  int max_qp, max_qp_wr;
  /* ... */
};
struct ibv_port_attr {
  enum ibv_port_state state;
  enum ibv_mtu max_mtu, active_mtu;
  int gid_tbl_len;
  uint32_t port_cap_flags, max_msg_sz, bad_pkey_cntr, qkey_viol_cntr;
  uint16_t pkey_tbl_len, lid;
  /* ... */
};
struct ibv_wc {
  uint64_t wr_id;
  enum ibv_wc_status status;
  enum ibv_wc_opcode opcode;
  uint32_t vendor_err, byte_len;
  /* ... */
};
struct ibv_pd { struct ibv_context* context; uint32_t handle; };
struct ibv_mr {
  struct ibv_context* context;
  struct ibv_pd* pd;
  void* addr;
  size_t length;
  uint32_t handle, lkey, rkey;
};
struct ibv_global_route {
  union ibv_gid dgid;
  uint32_t flow_label;
  uint8_t sgid_index, hop_limit, traffic_class;
};
struct ibv_ah_attr {
  struct ibv_global_route grh;
  uint16_t dlid;
  uint8_t sl, src_path_bits, static_rate, is_global, port_num;
};
struct ibv_qp_cap {
  uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge;
  uint32_t max_inline_data;
};
struct ibv_qp_init_attr {
  void* qp_context;
  struct ibv_cq *send_cq, *recv_cq;
  struct ibv_srq* srq;
  struct ibv_qp_cap cap;
  enum ibv_qp_type qp_type;
  int sq_sig_all;
};
struct ibv_qp_attr {
  enum ibv_qp_state qp_state, cur_qp_state;
  enum ibv_mtu path_mtu;
  enum ibv_mig_state path_mig_state;
  uint32_t qkey, rq_psn, sq_psn, dest_qp_num;
  unsigned int qp_access_flags;
  struct ibv_qp_cap cap;
  struct ibv_ah_attr ah_attr, alt_ah_attr;
  uint16_t pkey_index, alt_pkey_index;
  uint8_t en_sqd_async_notify, sq_draining, max_rd_atomic, max_dest_rd_atomic;
  uint8_t min_rnr_timer, port_num, timeout, retry_cnt, rnr_retry;
  /* ... */
};
struct ibv_sge { uint64_t addr; uint32_t length, lkey; };
struct ibv_send_wr {
  uint64_t wr_id;
  struct ibv_send_wr* next;
  struct ibv_sge* sg_list;
  int num_sge;
  enum ibv_wr_opcode opcode;
  unsigned int send_flags;
  /* ... imm_data, and the per-opcode unions (wr.rdma, wr.ud, ...) */
};
struct ibv_recv_wr {
  uint64_t wr_id;
  struct ibv_recv_wr* next;
  struct ibv_sge* sg_list;
  int num_sge;
};
struct ibv_cq { struct ibv_context* context; /* ... */ };
struct ibv_qp {
  struct ibv_context* context;
  void* qp_context;
  struct ibv_pd* pd;
  struct ibv_cq *send_cq, *recv_cq;
  struct ibv_srq* srq;
  uint32_t handle, qp_num;
  /* ... */
};
/* The provider's data path, at rdma-core's slots 11, 25 and 26. */
struct ibv_context_ops {
  void* _shim_slots_0_10[11];
  int (*poll_cq)(struct ibv_cq* cq, int num_entries, struct ibv_wc* wc);
  void* _shim_slots_12_24[13];
  int (*post_send)(struct ibv_qp* qp, struct ibv_send_wr* wr,
                   struct ibv_send_wr** bad_wr);
  int (*post_recv)(struct ibv_qp* qp, struct ibv_recv_wr* wr,
                   struct ibv_recv_wr** bad_wr);
  /* ... */
};
struct ibv_context {
  struct ibv_device* device;
  struct ibv_context_ops ops;
  /* ... */
};
/* clang-format on */

#ifdef MCL_VERBS_SHIM_PLAIN
#define MCL_VERBS_SHIM_PORT_ATTR struct ibv_port_attr
#else
#define MCL_VERBS_SHIM_PORT_ATTR struct _compat_ibv_port_attr
#endif

/* Exported by the library; mcl resolves them with dlsym. */
#ifdef MCL_VERBS_SHIM_AVAILABILITY
#pragma clang attribute push(                                \
    __attribute__((availability(macos, introduced = 26.2))), \
    apply_to = function)
#endif
struct ibv_device** ibv_get_device_list(int* num_devices);
void ibv_free_device_list(struct ibv_device** list);
const char* ibv_get_device_name(struct ibv_device* device);
struct ibv_context* ibv_open_device(struct ibv_device* device);
int ibv_close_device(struct ibv_context* context);
int ibv_query_device(struct ibv_context* context, struct ibv_device_attr* attr);
int ibv_query_port(struct ibv_context* context, uint8_t port_num,
                   MCL_VERBS_SHIM_PORT_ATTR* port_attr);
int ibv_query_gid(struct ibv_context* context, uint8_t port_num, int index,
                  union ibv_gid* gid);
struct ibv_pd* ibv_alloc_pd(struct ibv_context* context);
int ibv_dealloc_pd(struct ibv_pd* pd);
struct ibv_mr* ibv_reg_mr(struct ibv_pd* pd, void* addr, size_t length,
                          int access);
int ibv_dereg_mr(struct ibv_mr* mr);
struct ibv_cq* ibv_create_cq(struct ibv_context* context, int cqe,
                             void* cq_context, struct ibv_comp_channel* channel,
                             int comp_vector);
int ibv_destroy_cq(struct ibv_cq* cq);
struct ibv_qp* ibv_create_qp(struct ibv_pd* pd,
                             struct ibv_qp_init_attr* init_attr);
int ibv_modify_qp(struct ibv_qp* qp, struct ibv_qp_attr* attr, int attr_mask);
int ibv_destroy_qp(struct ibv_qp* qp);
const char* ibv_wc_status_str(enum ibv_wc_status status);
#ifdef MCL_VERBS_SHIM_AVAILABILITY
#pragma clang attribute pop
#endif

/* Inline, through the provider's ops: no library symbols. They return 0
 * (ibv_poll_cq: the number of completions) or an errno value. */
static inline int ibv_poll_cq(struct ibv_cq* cq, int num_entries,
                              struct ibv_wc* wc) {
  return cq->context->ops.poll_cq(cq, num_entries, wc);
}
static inline int ibv_post_send(struct ibv_qp* qp, struct ibv_send_wr* wr,
                                struct ibv_send_wr** bad_wr) {
  return qp->context->ops.post_send(qp, wr, bad_wr);
}
static inline int ibv_post_recv(struct ibv_qp* qp, struct ibv_recv_wr* wr,
                                struct ibv_recv_wr** bad_wr) {
  return qp->context->ops.post_recv(qp, wr, bad_wr);
}

#ifndef MCL_VERBS_SHIM_PLAIN
/* rdma-core's form (ibv_reg_mr has it too): the name followed by '(' is a
 * macro over an inline wrapper; the bare name is the exported function. */
static inline int mcl_shim_query_port(struct ibv_context* context,
                                      uint8_t port_num,
                                      struct ibv_port_attr* port_attr) {
  return (ibv_query_port)(context, port_num,
                          (struct _compat_ibv_port_attr*)port_attr);
}
#define ibv_query_port(context, port_num, port_attr) \
  mcl_shim_query_port(context, port_num, port_attr)
#endif

#ifdef __cplusplus
}
#endif

#endif /* MCL_SHIM_INFINIBAND_VERBS_H */
