// Bad use of the library, as a program that checks return codes sees it
// (MCL_MPI_ERRORS=return; by default each would end the process with the
// same message): every call must fail with MPI's error class and a message
// on stderr that names the call and the argument at fault.
#pragma once

#include <string>

#include "mlx_loader.h"

namespace mlx_replay {

// "" when every misuse was refused as it should be, else what was not.
std::string runMisuse(Mpi& mpi);

}  // namespace mlx_replay
