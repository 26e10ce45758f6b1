// What every exported call checks first: MPI_Init has run (and
// MPI_Finalize has not), and its communicator, datatype and count are ones
// this library knows, each failure named with the call and the argument.
#pragma once

#include <cstddef>

#include "comms.h"
#include "datatypes.h"
#include "mpi_abi.h"

namespace mcl::mpi {

bool initialized();
void setInitialized(bool value);
bool finalized();
void setFinalized();

// Each returns nullptr (count: false) after reporting the failure of
// `call`, whose status is then in *status.
Comm* usableComm(const char* call, MPI_Comm handle, int* status);
const Datatype* usableDatatype(const char* call, const char* argument,
                               MPI_Datatype handle, int* status);
bool usableCount(const char* call, const char* argument, int count,
                 int* status);

// The three checks of a data call at once: its communicator, the datatype
// named `typeArgument` and the count named `countArgument`. type is nullptr
// (and status set) when one failed.
struct DataCall {
  Comm* comm = nullptr;
  const Datatype* type = nullptr;
  int status = kSuccess;
};
DataCall usableDataCall(const char* call, MPI_Comm comm,
                        const char* typeArgument, MPI_Datatype type,
                        const char* countArgument, int count);

}  // namespace mcl::mpi
