#include "core/registry/transport_registry.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/error.h"
#include "transports/rdma/rdma_device.h"
#include "transports/shm/shm_device.h"
#include "transports/shm/shm_host.h"
#include "transports/tcp/tcp_device.h"

namespace mcl {

namespace {

template <typename D>
std::unique_ptr<transport::Device> make(const transport::DeviceInit& init) {
  return std::make_unique<D>(init);
}

std::mutex& registryMutex() {
  static std::mutex m;
  return m;
}

std::vector<TransportEntry>& entries() {
  static std::vector<TransportEntry> all = {
      {.name = "shm",
       .inAuto = true,
       .alwaysKept = true,
       .make = make<transport::shm::ShmDevice>,
       .params = transport::shm::shmParams,
       .hostSharedBytes = transport::shm::hostSharedBytes,
       .abandonedSegment = transport::shm::ringSegmentAbandoned,
       .segmentHolds = "shared-memory rings"},
      {.name = "rdma",
       .inAuto = true,
       .make = make<transport::rdma::RdmaDevice>,
       .params = transport::rdma::rdmaParams},
      {.name = "tcp",
       .inAuto = true,
       .make = make<transport::tcp::TcpDevice>,
       .params = transport::tcp::tcpParams},
  };
  return all;
}

}  // namespace

std::vector<TransportEntry> transportRegistry() {
  std::lock_guard<std::mutex> lock(registryMutex());
  return entries();
}

void addTransport(const TransportEntry& entry) {
  std::lock_guard<std::mutex> lock(registryMutex());
  for (const TransportEntry& e : entries())
    if (std::string(e.name) == entry.name || std::string(entry.name) == "auto")
      throw error(mclInvalidUsage, "a transport named '%s' is registered",
                  entry.name);
  entries().push_back(entry);
}

void removeTransport(const std::string& name) {
  std::lock_guard<std::mutex> lock(registryMutex());
  std::erase_if(entries(),
                [&](const TransportEntry& e) { return name == e.name; });
}

std::string transportChoices() {
  std::string text = "auto";
  for (const TransportEntry& e : transportRegistry())
    text += std::string(", ") + e.name;
  return text;
}

std::vector<TransportEntry> transportsFor(const std::string& setting) {
  std::vector<TransportEntry> all = transportRegistry();
  std::vector<TransportEntry> tried;
  if (setting == "auto") {
    for (const TransportEntry& e : all)
      if (e.inAuto) tried.push_back(e);
    return tried;
  }
  for (const TransportEntry& e : all)
    if (setting == e.name) tried.push_back(e);
  if (tried.empty())
    throw error(mclInvalidArgument, "transport '%s' is unknown; use %s",
                setting.c_str(), transportChoices().c_str());
  for (const TransportEntry& e : all)
    if (e.alwaysKept && setting != e.name) tried.push_back(e);
  return tried;
}

}  // namespace mcl
