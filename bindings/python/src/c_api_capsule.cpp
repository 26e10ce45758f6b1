// The capsule mcl._mcl._C_API (c_api_table.h).
#include <mcl/mcl.h>
#include <pybind11/pybind11.h>

#include "c_api_table.h"

namespace mcl::python {

namespace {

const CApiTable kTable = {
    kCApiTableVersion,
    sizeof(CApiTable),
    MCL_VERSION_CODE,
    mclGetErrorString,
    mclGetLastError,
    mclUniqueIdFromString,
    mclCommInitRankConfig,
    mclCommDestroy,
    mclCommAbort,
    mclCommGetAsyncError,
    mclCommGetTopology,
    mclMemAlloc,
    mclMemFree,
    mclAllReduce,
    mclAllGather,
    mclBroadcast,
    mclReduce,
    mclReduceScatter,
    mclAlltoAll,
    mclBarrier,
    mclSend,
    mclRecv,
    mclGroupStart,
    mclGroupEnd,
};

}  // namespace

void registerCApi(pybind11::module_& m) {
  // The table is static: the capsule needs no destructor.
  m.attr("_C_API") =
      pybind11::capsule(static_cast<const void*>(&kTable), kCApiCapsuleName);
}

}  // namespace mcl::python
