// mcl's C API as a table of function pointers, which the native module
// _mcl hands out as the capsule mcl._mcl._C_API: another extension in the
// same process (the PyTorch backend, bindings/torch) calls the one copy of
// the library the package carries (linked statically into _mcl, its
// symbols hidden), instead of a second copy with state of its own.
#pragma once

#include <mcl/mcl.h>

#include <cstddef>

namespace mcl::python {

// The capsule's name; the table's layout is fixed for a given version
// (bump it on any change: a consumer built against another refuses it).
inline constexpr const char* kCApiCapsuleName = "mcl._mcl._C_API";
inline constexpr int kCApiTableVersion = 1;

struct CApiTable {
  int version;         // kCApiTableVersion
  size_t size;         // sizeof(CApiTable)
  int libraryVersion;  // MCL_VERSION_CODE the table was built with
  decltype(&mclGetErrorString) getErrorString;
  decltype(&mclGetLastError) getLastError;
  decltype(&mclUniqueIdFromString) uniqueIdFromString;
  decltype(&mclCommInitRankConfig) commInitRankConfig;
  decltype(&mclCommDestroy) commDestroy;
  decltype(&mclCommAbort) commAbort;
  decltype(&mclCommGetAsyncError) commGetAsyncError;
  decltype(&mclCommGetTopology) commGetTopology;
  decltype(&mclMemAlloc) memAlloc;
  decltype(&mclMemFree) memFree;
  decltype(&mclAllReduce) allReduce;
  decltype(&mclAllGather) allGather;
  decltype(&mclBroadcast) broadcast;
  decltype(&mclReduce) reduce;
  decltype(&mclReduceScatter) reduceScatter;
  decltype(&mclAlltoAll) alltoAll;
  decltype(&mclBarrier) barrier;
  decltype(&mclSend) send;
  decltype(&mclRecv) recv;
  decltype(&mclGroupStart) groupStart;
  decltype(&mclGroupEnd) groupEnd;
};

}  // namespace mcl::python
