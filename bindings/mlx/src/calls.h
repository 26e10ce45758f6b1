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

}  // namespace mcl::mpi
