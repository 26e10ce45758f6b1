#include "core/bootstrap/launch_env.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <stdexcept>
#include <string>

#include "base/error.h"
#include "base/log.h"
#include "core/bootstrap/job_secret_file.h"

namespace mcl {

namespace {

const char* env(const char* name) {
  const char* v = getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

int intVar(const char* name, int lo, int hi) {
  const char* text = env(name);
  errno = 0;
  char* end = nullptr;
  long v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi)
    throw error(mclInvalidArgument, "%s='%s' is not an integer in [%d, %d]",
                name, text, lo, hi);
  return static_cast<int>(v);
}

// Entries of the top-level JSON array of an mlx.launch file (variable
// names it): its hostfile or device matrix, one entry per rank.
int countHostfileEntries(const char* variable, const char* path) {
  std::ifstream in(path);
  if (!in)
    throw error(mclInvalidArgument, "%s '%s' cannot be read", variable, path);
  std::stringstream text;
  text << in.rdbuf();
  int depth = 0, entries = 0;
  bool inString = false, sawValue = false;
  for (char c : text.str()) {
    if (inString) {
      if (c == '"') inString = false;
      continue;
    }
    if (c == '"') inString = true;
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') --depth;
    if (depth == 1 && c == ',') ++entries;
    if (depth >= 1 && c != ' ' && c != '\n' && c != '[' && c != ',')
      sawValue = true;
  }
  return sawValue ? entries + 1 : 0;
}

void readRankAndSize(LaunchEnv& e) {
  struct Pair {
    const char* rank;
    const char* size;
    const char* source;
  };
  static const Pair kPairs[] = {
      {"MCL_RANK", "MCL_WORLD_SIZE", "MCL_RANK/MCL_WORLD_SIZE"},
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI"},
      {"PMI_RANK", "PMI_SIZE", "PMI"},
      {"SLURM_PROCID", "SLURM_NTASKS", "SLURM"},
      {"RANK", "WORLD_SIZE", "torchrun"},
      {"MLX_RANK", "MLX_WORLD_SIZE", "mlx.launch"},
  };
  for (const Pair& p : kPairs) {
    if (env(p.rank) == nullptr || env(p.size) == nullptr) continue;
    e.nranks = intVar(p.size, 1, 1 << 20);
    e.rank = intVar(p.rank, 0, e.nranks - 1);
    e.rankSource = p.source;
    return;
  }
  // mlx.launch: its ring backend's hostfile, or its JACCL backend's device
  // matrix, has one top-level entry per rank.
  for (const char* list : {"MLX_HOSTFILE", "MLX_IBV_DEVICES"}) {
    if (env("MLX_RANK") == nullptr || env(list) == nullptr) continue;
    e.nranks = countHostfileEntries(list, env(list));
    if (e.nranks < 1)
      throw error(mclInvalidArgument, "%s '%s' lists no ranks", list,
                  env(list));
    e.rank = intVar("MLX_RANK", 0, e.nranks - 1);
    e.rankSource = "mlx.launch";
    return;
  }
  throw error(mclInvalidArgument,
              "no rank in the environment: set MCL_RANK and MCL_WORLD_SIZE, "
              "or start under mpirun, srun, torchrun or mlx.launch");
}

// "host:port" or "[v6]:port"; port + offset.
platform::SocketAddress parseHostPort(const char* name, const char* text,
                                      int offset) {
  std::string s(text);
  size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon + 1 == s.size())
    throw error(mclInvalidArgument, "%s='%s' is not host:port", name, text);
  std::string host = s.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  char* end = nullptr;
  long port = strtol(s.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || port < 1 || port > 65535 - offset)
    throw error(mclInvalidArgument, "%s='%s' has no valid port", name, text);
  try {
    return platform::SocketAddress::resolve(host,
                                            static_cast<int>(port) + offset);
  } catch (const std::invalid_argument& x) {
    throw error(mclInvalidArgument, "%s='%s': %s", name, text, x.what());
  }
}

// Without MCL_SECRET: a value of the job that outsiders cannot read, where
// the launcher has one, else nothing. Open MPI 1.x-4.x's mpirun (ORTE)
// draws a per-job transport key from /dev/urandom and puts it into every
// process's environment at launch, next to OMPI_MCA_ess_base_jobid. The
// same versions' MPI_Init, when no mpirun started the process (srun's
// direct launch, a singleton), fills that variable itself from the job id:
// public, so the key counts only beside ess_base_jobid. Open MPI 5 (PRRTE)
// sets neither, except through PMIx's Omni-Path component; it is not used
// there.
const char* launcherSecret() {
  const char* key = env("OMPI_MCA_orte_precondition_transports");
  if (key == nullptr) return nullptr;
  if (env("OMPI_MCA_ess_base_jobid") == nullptr) {
    MCL_LOG(Info, kLogInit,
            "OMPI_MCA_orte_precondition_transports is not used: without "
            "Open MPI's mpirun it may come from the public job id");
    return nullptr;
  }
  return key;
}

Secret secretFromHex(const char* hex) {
  try {
    return uniqueIdFromString(std::string("mcl1:127.0.0.1:1:") + hex).secret;
  } catch (const Error&) {
    throw error(mclInvalidArgument,
                "MCL_SECRET is not a secret of 32 hex digits");
  }
}

// The job's secret: MCL_SECRET, else one from the launcher's private key,
// else (every rank on this host) a random one rank 0 makes and shares in a
// private file. Never one from public values (the port, a job id): another
// user could compute it and join. A rendezvous other hosts can reach is
// refused without a private secret, since anyone who reaches it could
// otherwise join and read everybody's data.
void chooseSecret(LaunchEnv& e, const std::string& rootText,
                  const std::string& jobId) {
  if (const char* hex = env("MCL_SECRET")) {
    e.id.secret = secretFromHex(hex);
    e.secretSource = SecretSource::Given;
    return;
  }
  if (const char* key = launcherSecret()) {
    const std::string text = std::to_string(rootText.size()) + ":" + rootText +
                             "|" + std::to_string(jobId.size()) + ":" + jobId +
                             "|" + key;
    e.id.secret = secretFromText(text);
    e.secretSource = SecretSource::Launcher;
    MCL_LOG(Info, kLogInit,
            "MCL_SECRET is not set: the rendezvous secret comes from Open "
            "MPI's private job key");
    return;
  }
  if (!e.id.root.isLoopback())
    throw error(mclInvalidArgument,
                "MCL_SECRET is not set and the rendezvous %s (%s) is reachable "
                "from other hosts: set MCL_SECRET to the same 32 hex digits on "
                "every rank (e.g. from `openssl rand -hex 16`)",
                rootText.c_str(), e.id.root.toString().c_str());
  e.secretSource = SecretSource::SharedFile;
  e.secretFile = jobSecretPath(e.id.root, jobId);
  // Rank 0 makes it now, before its rendezvous listens; the others read it
  // once that rendezvous is up (readJobSecret), during init.
  if (e.rank == 0) e.id.secret = createJobSecret(e.secretFile);
}

// The launcher's name for this job, the same in each of its processes:
// Open MPI 1.x-4.x's mpirun, PMIx's namespace (Open MPI 5's mpirun,
// srun --mpi=pmix: one per job step), else SLURM's job.
const char* singleHostJobId() {
  for (const char* name :
       {"OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", "SLURM_JOB_ID"})
    if (const char* job = env(name)) return job;
  return nullptr;
}

void readRoot(LaunchEnv& e) {
  if (const char* id = env("MCL_UNIQUE_ID")) {
    e.id = uniqueIdFromString(id);
    e.rootSource = "MCL_UNIQUE_ID";
    return;
  }
  const char* name = nullptr;
  int offset = 0;
  std::string rootText;
  std::string jobId;
  if (env("MCL_ROOT")) {
    name = "MCL_ROOT";
  } else if (env("MASTER_ADDR") && env("MASTER_PORT")) {
    // torchrun's own store listens on MASTER_PORT; mcl takes the next one.
    rootText = std::string(env("MASTER_ADDR")) + ":" + env("MASTER_PORT");
    e.id.root = parseHostPort("MASTER_ADDR:MASTER_PORT", rootText.c_str(), 1);
    e.rootSource = "torchrun MASTER_ADDR:MASTER_PORT+1";
    if (const char* run = env("TORCHELASTIC_RUN_ID")) jobId = run;
  } else if (env("MLX_JACCL_COORDINATOR")) {
    name = "MLX_JACCL_COORDINATOR";
    offset = 1;  // MLX's coordinator holds the port itself
  } else if (const char* job = singleHostJobId()) {
    // mpirun or srun on one host gives no address: rank 0 listens on
    // loopback at a port every rank derives from the job id. Across hosts,
    // set MCL_ROOT.
    unsigned port = 20000;
    for (const char* p = job; *p; ++p)
      port = port * 31 + static_cast<unsigned char>(*p);
    e.id.root = platform::SocketAddress::fromNumeric(
        "127.0.0.1", 20000 + static_cast<int>(port % 30000));
    e.rootSource = "single-host job id (set MCL_ROOT across hosts)";
    rootText = e.id.root.toString();
    jobId = job;
  } else {
    throw error(mclInvalidArgument,
                "no rendezvous in the environment: set MCL_UNIQUE_ID, or "
                "MCL_ROOT=host:port (rank 0 listens there) with MCL_SECRET");
  }
  if (name != nullptr) {
    rootText = env(name);
    e.id.root = parseHostPort(name, rootText.c_str(), offset);
    e.rootSource = name;
  }
  std::string host = rootText.substr(0, rootText.rfind(':'));
  if (host.size() >= 2 && host.front() == '[')
    host = host.substr(1, host.size() - 2);
  try {
    platform::SocketAddress::fromNumeric(host, 0);
  } catch (const std::invalid_argument&) {
    e.rootIsName = true;  // resolves differently on each host, maybe
  }
  e.rankZeroListens = true;
  chooseSecret(e, rootText, jobId);
}

}  // namespace

LaunchEnv readLaunchEnv() {
  LaunchEnv e;
  readRankAndSize(e);
  readRoot(e);
  return e;
}

}  // namespace mcl
