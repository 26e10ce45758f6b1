// The communicators MLX holds: MPI_COMM_WORLD (mcl's communicator from the
// launcher's environment, or none in a world of one) and those split from
// it.
#pragma once

#include <mcl/mcl.h>

#include "mpi_abi.h"

namespace mcl::mpi {

struct Comm {
  mclComm_t mcl = nullptr;  // nullptr: a world of one process
  int rank = 0;
  int size = 1;
};

// The world, once MPI_Init made it; nullptr before.
Comm* world();
void setWorld(Comm* comm);
// The communicator behind a handle; nullptr for one this library never made
// (or freed), and for the world before MPI_Init.
Comm* findComm(MPI_Comm handle);
MPI_Comm addComm(Comm* comm);  // a split's, owned from now on
// Forgets and returns a split's communicator; nullptr for an unknown one.
Comm* removeComm(MPI_Comm handle);

}  // namespace mcl::mpi
