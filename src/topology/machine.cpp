#include "topology/machine.h"

#include <unistd.h>

#include <cstdint>
#include <mutex>

#if MCL_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace mcl::topology {

namespace {

#if MCL_HAVE_HWLOC
int countOf(hwloc_topology_t t, hwloc_obj_type_t type) {
  int n = hwloc_get_nbobjs_by_type(t, type);
  return n < 0 ? 0 : n;
}

uint64_t cacheSize(hwloc_topology_t t, hwloc_obj_type_t type) {
  hwloc_obj_t obj = hwloc_get_obj_by_type(t, type, 0);
  return obj != nullptr && obj->attr != nullptr ? obj->attr->cache.size : 0;
}

bool fromHwloc(MachineInfo& m) {
  hwloc_topology_t t;
  if (hwloc_topology_init(&t) != 0) return false;
  if (hwloc_topology_load(t) != 0) {
    hwloc_topology_destroy(t);
    return false;
  }
  m.cores = countOf(t, HWLOC_OBJ_CORE);
  m.threads = countOf(t, HWLOC_OBJ_PU);
  m.numaNodes = countOf(t, HWLOC_OBJ_NUMANODE);
  m.packages = countOf(t, HWLOC_OBJ_PACKAGE);
  m.l2Bytes = cacheSize(t, HWLOC_OBJ_L2CACHE);
  m.l3Bytes = cacheSize(t, HWLOC_OBJ_L3CACHE);
  hwloc_obj_t root = hwloc_get_root_obj(t);
  m.memoryBytes = root->total_memory;
  hwloc_obj_t package = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 0);
  if (package != nullptr) {
    const char* model = hwloc_obj_get_info_by_name(package, "CPUModel");
    if (model != nullptr) m.cpuModel = model;
  }
  hwloc_topology_destroy(t);
  m.source = "hwloc";
  return m.threads > 0;
}
#endif

MachineInfo fromSysconf() {
  MachineInfo m;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  m.threads = n > 0 ? static_cast<int>(n) : 1;
  m.cores = m.threads;  // the OS does not say which threads share a core
#if defined(_SC_PHYS_PAGES)
  long pages = sysconf(_SC_PHYS_PAGES);
  long pageSize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0)
    m.memoryBytes =
        static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
#endif
  m.source = "sysconf";
  return m;
}

}  // namespace

const MachineInfo& describeMachine() {
  static std::once_flag once;
  static MachineInfo machine;
  std::call_once(once, [] {
#if MCL_HAVE_HWLOC
    MachineInfo m;
    if (fromHwloc(m)) {
      machine = m;
      return;
    }
#endif
    machine = fromSysconf();
  });
  return machine;
}

}  // namespace mcl::topology
