// Who this process is in a job started by a launcher, read from the
// environment: rank and size from mcl's own variables or those of Open MPI,
// PMI, SLURM, torchrun or mlx.launch; the rendezvous from MCL_UNIQUE_ID, or
// an address rank 0 listens on (MCL_ROOT, torchrun's MASTER_ADDR and
// MASTER_PORT+1, MLX_JACCL_COORDINATOR's port+1, or for a single-host
// mpirun/srun job a loopback port derived from the job id).
#pragma once

#include <string>

#include "core/unique_id.h"

namespace mcl {

struct LaunchEnv {
  int rank = -1;
  int nranks = 0;
  std::string rankSource;  // which variables gave rank and size
  UniqueIdContents id;
  std::string rootSource;        // which variables gave the rendezvous
  bool rankZeroListens = false;  // rank 0 starts the root at id.root
  // The root was given by host name: rank 0 may resolve it to loopback
  // (127.0.1.1), so it listens on its usual addresses with that port.
  bool rootIsName = false;
};

// Throws mclInvalidArgument naming the variables when nothing usable is
// set or a value is malformed.
LaunchEnv readLaunchEnv();

}  // namespace mcl
