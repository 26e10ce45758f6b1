// Who this process is in a job started by a launcher, read from the
// environment: rank and size from mcl's own variables or those of Open MPI,
// PMI, SLURM, torchrun or mlx.launch; the rendezvous from MCL_UNIQUE_ID, or
// an address rank 0 listens on (MCL_ROOT, torchrun's MASTER_ADDR and
// MASTER_PORT+1, MLX_JACCL_COORDINATOR's port+1, or for a single-host
// mpirun/srun job a loopback port derived from the job id), and its secret
// (launch_env.cpp's chooseSecret says where from).
#pragma once

#include <string>

#include "core/bootstrap/unique_id.h"

namespace mcl {

// Where the rendezvous secret came from.
enum class SecretSource {
  Given,       // MCL_SECRET, or the unique id in MCL_UNIQUE_ID
  Launcher,    // derived from the launcher's private job key
  SharedFile,  // single host: rank 0's random secret, in a private file
};

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
  SecretSource secretSource = SecretSource::Given;
  // SharedFile: where rank 0 wrote the secret. The other ranks have no
  // secret in id until they read it there (readJobSecret), and rank 0's
  // rendezvous listens on loopback only.
  std::string secretFile;
};

// Throws mclInvalidArgument naming the variables when nothing usable is
// set or a value is malformed.
LaunchEnv readLaunchEnv();

}  // namespace mcl
