#include "topology/host_checks.h"

#include <cstdint>
#include <string>
#include <vector>

#include "base/byte_text.h"

namespace mcl::topology {

namespace {

std::string hostText(const ClusterHost& h) {
  return "host " + std::to_string(h.id) + " (" + h.name + ")";
}

void checkSharedMemory(const ClusterHost& h, const HostNeeds& needs,
                       std::vector<Finding>& out) {
  const HostLimits& l = h.inventory.limits;
  const int ranks = static_cast<int>(h.ranks.size());
  if (!l.shmKnown || ranks < 2 || !needs.ringBytes) return;
  const uint64_t want = needs.ringBytes(ranks);
  const auto total = static_cast<uint64_t>(l.shmTotalBytes);
  if (want <= total / 4 * 3) return;
  out.push_back(
      {"info",
       hostText(h) + ": /dev/shm holds " + bytesText(total) + " (" +
           bytesText(static_cast<uint64_t>(l.shmFreeBytes)) +
           " free now); the shared-memory rings of its " +
           std::to_string(ranks) + " ranks want " + bytesText(want),
       "the rings may take three quarters of /dev/shm's room: init shrinks "
       "them (large messages move more slowly) or, below 2 slots of 1 KiB, "
       "fails",
       "give /dev/shm at least " + bytesText(want / 3 * 4) +
           " (docker run --shm-size; mount -o remount,size=... /dev/shm), "
           "or run fewer ranks on this host"});
}

void checkDescriptors(const ClusterHost& h, const HostNeeds& needs,
                      std::vector<Finding>& out) {
  const HostLimits& l = h.inventory.limits;
  if (l.openFiles == HostLimits::kUnlimited || needs.descriptorsPerRank <= 0)
    return;
  const int64_t perComm = needs.descriptorsPerRank;
  if (l.openFiles >= 8 * perComm) return;
  out.push_back(
      {"warning",
       hostText(h) + ": ulimit -n is " + std::to_string(l.openFiles) +
           "; a rank of this communicator holds about " +
           std::to_string(perComm) + " descriptors during init",
       "a process with more than " + std::to_string(l.openFiles / perComm) +
           " such communicators, or with many files of its own, fails "
           "with EMFILE (Too many open files)",
       l.openFilesHard == HostLimits::kUnlimited ||
               l.openFilesHard > l.openFiles
           ? "raise it before starting the job: ulimit -n " +
                 std::to_string(l.openFilesHard == HostLimits::kUnlimited
                                    ? int64_t{65536}
                                    : l.openFilesHard) +
                 " (up to the hard limit)"
           : "the hard limit is " + std::to_string(l.openFilesHard) +
                 " too: raise it as root (a nofile entry in "
                 "/etc/security/limits.conf; launchctl limit maxfiles on "
                 "macOS) or in the container's settings (docker run "
                 "--ulimit nofile=65536)"});
}

void checkLockedMemory(const ClusterHost& h, std::vector<Finding>& out) {
  const HostLimits& l = h.inventory.limits;
  constexpr int64_t kEnough = int64_t{1} << 30;
  if (h.inventory.rdmaDevices.empty() ||
      l.lockedBytes == HostLimits::kUnlimited || l.lockedBytes >= kEnough)
    return;
  out.push_back(
      {"info",
       hostText(h) + ": ulimit -l is " +
           bytesText(static_cast<uint64_t>(l.lockedBytes)) +
           " and it has RDMA devices",
       "registering memory for RDMA pins it, and on Linux the pinned bytes "
       "count against ulimit -l: registrations beyond it fail",
       "ulimit -l unlimited (or a limits.conf memlock entry) for the "
       "job's user"});
}

void checkCores(const ClusterHost& h, std::vector<Finding>& out) {
  const int cores = h.inventory.machine.cores;
  const int ranks = static_cast<int>(h.ranks.size());
  if (cores <= 0 || ranks <= cores) return;
  out.push_back(
      {"info",
       hostText(h) + " runs " + std::to_string(ranks) + " ranks on " +
           std::to_string(cores) + " cores",
       "a rank then often waits for the OS to switch another in before its "
       "peer answers (tens of microseconds a hop); the tuner counts on it, "
       "but every collective is slower",
       "run at most " + std::to_string(cores) + " ranks on this host"});
}

}  // namespace

void checkHostLimits(const Cluster& cluster, const HostNeeds& needs,
                     std::vector<Finding>& out) {
  for (const ClusterHost& h : cluster.hosts) {
    if (!h.hasInventory || !h.inventory.limits.known) continue;
    checkSharedMemory(h, needs, out);
    checkDescriptors(h, needs, out);
    checkLockedMemory(h, out);
    checkCores(h, out);
  }
}

}  // namespace mcl::topology
