#include "calls.h"

#include <atomic>
#include <string>

#include "failure.h"

namespace mcl::mpi {

namespace {
std::atomic<bool> initDone{false};
std::atomic<bool> finalizeDone{false};
}  // namespace

bool initialized() { return initDone.load(); }
void setInitialized(bool value) { initDone.store(value); }
bool finalized() { return finalizeDone.load(); }
void setFinalized() { finalizeDone.store(true); }

Comm* usableComm(const char* call, MPI_Comm handle, int* status) {
  if (!initialized()) {
    *status = fail(kErrOther, call, "called before MPI_Init");
    return nullptr;
  }
  if (finalized()) {
    *status = fail(kErrOther, call, "called after MPI_Finalize");
    return nullptr;
  }
  Comm* comm = findComm(handle);
  if (comm == nullptr)
    *status = fail(kErrComm, call,
                   "comm " + handleText(handle, "a communicator of this job"));
  return comm;
}

const Datatype* usableDatatype(const char* call, const char* argument,
                               MPI_Datatype handle, int* status) {
  const Datatype* type = findDatatype(handle);
  if (type == nullptr) {
    *status =
        fail(kErrType, call,
             std::string(argument) + " " + handleText(handle, "a datatype"));
    return nullptr;
  }
  if (!type->committed) {
    *status = fail(kErrType, call,
                   std::string(argument) + " " + datatypeText(*type) +
                       " is not committed (MPI_Type_commit)");
    return nullptr;
  }
  return type;
}

bool usableCount(const char* call, const char* argument, int count,
                 int* status) {
  if (count >= 0) return true;
  *status = fail(kErrCount, call,
                 std::string(argument) + " " + std::to_string(count) +
                     " is negative (MLX narrows an array of 2^31 elements "
                     "or more to an int: split such a call)");
  return false;
}

DataCall usableDataCall(const char* call, MPI_Comm comm,
                        const char* typeArgument, MPI_Datatype type,
                        const char* countArgument, int count) {
  DataCall c;
  c.comm = usableComm(call, comm, &c.status);
  if (c.comm == nullptr) return c;
  const Datatype* checked = usableDatatype(call, typeArgument, type, &c.status);
  if (checked != nullptr && usableCount(call, countArgument, count, &c.status))
    c.type = checked;
  return c;
}

}  // namespace mcl::mpi
