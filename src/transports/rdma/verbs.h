// The verbs that mcl's RDMA transport uses, as one provider interface with
// two implementations: `ibverbs` (the system library, loaded with dlopen:
// librdma.dylib on macOS 26.2+, libibverbs.so.1 on Linux) and `emu` (an
// emulated Thunderbolt fabric across the processes of one machine, for
// tests). Only what the transport needs: devices, ports, protection domain
// with registered memory, completion queues, UC/RC queue pairs with
// two-sided SEND/RECV. Errors throw mcl::Error naming the device.
//
// Apple's provider, as others found it (docs/rdma.md has the table; the
// emulated provider enforces each rule):
// - UC queue pairs only, RC creation fails with errno 102: measured (MLX
//   JACCL, exo).
// - Path MTU 1024, no inline data, page-aligned registrations: the
//   settings MLX's JACCL uses, known to work; others untested.
// - Frames over 4 KiB only from macOS 26.3: measured by MLX (FrameLimit).
// - A SEND must cover as many 4 KiB Thunderbolt frames as the receive it
//   lands in: inferred from Apple's TN3205 as llama.cpp's Apple transport
//   (PR #26421) reads it (rdma_connection.h's sendLength).
// - At most 32 receives posted per queue pair, the 33rd fails with ENOMEM:
//   measured (hellas-ai/thunderbolt-ibverbs; DeviceInfo::maxPostedRecvs).
// - A lost UC frame gives no error: measured on the Linux-to-Mac path by
//   thunderbolt-ibverbs and hellas' llama.cpp patches (RdmaConnection
//   numbers, acknowledges and resends).
// - Every work completion's status must be checked: mlx PR #3152
//   (Completion::ok; RdmaConnection fails naming the wire and frame).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mcl::transport::rdma {

enum class QpType { UC, RC };
const char* qpTypeName(QpType type);

struct DeviceInfo {
  std::string name;    // "rdma_en2"
  std::string netdev;  // "en2"; may be empty
  bool rcSupported = false;
  int maxQpWr = 0;  // work requests a queue may hold
  // Receives one queue pair takes posted at once (0: unknown), and where
  // the figure comes from: Apple's provider fails the 33rd with ENOMEM.
  int maxPostedRecvs = 0;
  std::string recvLimitSource;
};

enum class PortState { Down, Init, Active };

struct PortInfo {
  PortState state = PortState::Down;
  int mtu = 1024;  // active path MTU in bytes
  // The IPv4-mapped GID (::ffff:a.b.c.d), which exists only while the
  // port's interface has an IPv4 address; gidIndex -1 when there is none.
  int gidIndex = -1;
  std::array<uint8_t, 16> gid{};
  uint16_t lid = 0;
};

// What the peer's queue pair needs to reach this one; travels over the
// bootstrap.
struct QpAddress {
  std::array<uint8_t, 16> gid{};
  uint32_t qpn = 0;
  uint32_t psn = 0;
  uint16_t lid = 0;
  uint32_t mtu = 1024;
};

struct Completion {
  uint64_t wrId = 0;
  bool ok = true;
  bool recv = false;
  uint32_t bytes = 0;  // received bytes (receives)
  std::string error;   // when !ok: the provider's status text
};

// Registered memory: the provider may touch it only between registration
// and deregistration (destruction).
class MemoryRegion {
 public:
  virtual ~MemoryRegion() = default;
  virtual uint32_t lkey() const = 0;
};

class CompletionQueue {
 public:
  virtual ~CompletionQueue() = default;
  // Up to `max` completions, without blocking; returns how many.
  virtual int poll(Completion* out, int max) = 0;
};

class QueuePair {
 public:
  virtual ~QueuePair() = default;
  virtual QpAddress address() const = 0;
  // Moves to ready-to-send toward `remote` (INIT -> RTR -> RTS).
  virtual void connect(const QpAddress& remote) = 0;
  // Two-sided operations on registered memory. Throw when the queue is
  // full (the transport's credits prevent that) or the QP is not ready.
  virtual void postSend(uint64_t wrId, const MemoryRegion& mr,
                        const std::byte* data, uint32_t bytes) = 0;
  virtual void postRecv(uint64_t wrId, const MemoryRegion& mr, std::byte* data,
                        uint32_t bytes) = 0;
};

struct QpOptions {
  QpType type = QpType::UC;
  int sendDepth = 32;
  int recvDepth = 32;
  uint32_t maxMessageBytes = 4096;  // the largest SEND the QP will carry
  // Bytes of inline data to ask for: 0 by default, as MLX's JACCL asks on
  // Apple's provider (the only settings known to work there); the queue
  // pair may grant less, and sends go inline only within what it granted.
  uint32_t inlineBytes = 0;
};

// The largest frame (one SEND) the provider carries on this system, and
// why: Apple's provider takes frames over 4 KiB only from macOS 26.3.
struct FrameLimit {
  uint32_t maxBytes = 0;  // 0: no limit known
  std::string why;        // "macOS 26.2 (frames over 4096 bytes need 26.3)"
};

// An opened device: its port and the resources made on it. Destroying it
// after everything made from it is gone releases the device.
class DeviceContext {
 public:
  virtual ~DeviceContext() = default;
  virtual const DeviceInfo& info() const = 0;
  virtual PortInfo queryPort() = 0;
  virtual std::unique_ptr<MemoryRegion> registerMemory(void* data,
                                                       size_t bytes) = 0;
  virtual std::unique_ptr<CompletionQueue> createCompletionQueue(int depth) = 0;
  // Both directions complete on `cq`.
  virtual std::unique_ptr<QueuePair> createQueuePair(CompletionQueue& cq,
                                                     const QpOptions& o) = 0;
};

class Provider {
 public:
  virtual ~Provider() = default;
  virtual const char* name() const = 0;  // "ibverbs" or "emu"
  virtual FrameLimit frameLimit() const = 0;
  // True for the emulated fabric: every report about it says "emulated".
  virtual bool emulated() const = 0;
  virtual std::vector<DeviceInfo> devices() = 0;
  virtual std::unique_ptr<DeviceContext> open(const std::string& device) = 0;
};

}  // namespace mcl::transport::rdma
