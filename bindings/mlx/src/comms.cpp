#include "comms.h"

#include <atomic>
#include <mutex>
#include <set>

#include "predefined.h"

namespace mcl::mpi {

namespace {

std::atomic<Comm*> worldComm{nullptr};

std::mutex& splitsMutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::set<Comm*>& splits() {
  static auto* s = new std::set<Comm*>;
  return *s;
}

}  // namespace

Comm* world() { return worldComm.load(); }

void setWorld(Comm* comm) { worldComm.store(comm); }

Comm* findComm(MPI_Comm handle) {
  if (handle == &ompi_mpi_comm_world) return world();
  auto* comm = static_cast<Comm*>(handle);
  std::lock_guard<std::mutex> lock(splitsMutex());
  return splits().count(comm) != 0 ? comm : nullptr;
}

MPI_Comm addComm(Comm* comm) {
  std::lock_guard<std::mutex> lock(splitsMutex());
  splits().insert(comm);
  return comm;
}

Comm* removeComm(MPI_Comm handle) {
  auto* comm = static_cast<Comm*>(handle);
  std::lock_guard<std::mutex> lock(splitsMutex());
  return splits().erase(comm) != 0 ? comm : nullptr;
}

}  // namespace mcl::mpi
