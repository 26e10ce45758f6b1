// MPI's life cycle as MLX calls it: the version check, MPI_Init (the world
// from the launcher's environment), the world's rank and size, split and
// free, MPI_Finalize; and the datatypes and ops MLX makes after MPI_Init.
#include <mcl/mcl.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "calls.h"
#include "comms.h"
#include "datatypes.h"
#include "failure.h"
#include "mpi_abi.h"
#include "ops.h"
#include "predefined.h"

using namespace mcl::mpi;

namespace {

// Open MPI's MPI_UNDEFINED: a split's color for "no new communicator".
constexpr int kUndefined = -32766;

// Whether a launcher started this process as one rank of a job: without
// one it is a world of one, as under Open MPI without mpirun.
bool launched() {
  for (const char* rank : {"MCL_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                           "SLURM_PROCID", "MLX_RANK"})
    if (getenv(rank) != nullptr) return true;
  return false;
}

}  // namespace

extern "C" {

MCL_MPI_EXPORT int MPI_Get_library_version(char* version, int* resultlen) {
  // MLX turns the backend off unless this names Open MPI.
  const int written = snprintf(
      version, kMaxVersionText,
      "mcl %d.%d.%d: the subset of the Open MPI interface that MLX loads "
      "(not Open MPI)",
      MCL_MAJOR, MCL_MINOR, MCL_PATCH);
  *resultlen = written < kMaxVersionText ? written : kMaxVersionText - 1;
  return kSuccess;
}

MCL_MPI_EXPORT int MPI_Init(int* /*argc*/, char*** /*argv*/) {
  if (initialized()) return fail(kErrOther, "MPI_Init", "called twice");
  auto* comm = new Comm;
  if (launched()) {
    const mclResult_t r = mclCommInitFromEnv(&comm->mcl, nullptr);
    if (r != mclSuccess) {
      delete comm;
      return failMcl(r, "MPI_Init", nullptr, "");
    }
    mclCommUserRank(comm->mcl, &comm->rank);
    mclCommCount(comm->mcl, &comm->size);
  }
  setWorld(comm);
  setInitialized(true);
  return kSuccess;
}

MCL_MPI_EXPORT int MPI_Finalize(void) {
  int status = kSuccess;
  Comm* comm = usableComm("MPI_Finalize", &ompi_mpi_comm_world, &status);
  if (comm == nullptr) return status;
  setFinalized();
  if (comm->mcl != nullptr) {
    const mclResult_t r = mclCommDestroy(comm->mcl);
    comm->mcl = nullptr;
    if (r != mclSuccess) return failMcl(r, "MPI_Finalize", nullptr, "");
  }
  return kSuccess;
}

MCL_MPI_EXPORT int MPI_Comm_rank(MPI_Comm handle, int* rank) {
  int status = kSuccess;
  Comm* comm = usableComm("MPI_Comm_rank", handle, &status);
  if (comm == nullptr) return status;
  *rank = comm->rank;
  return kSuccess;
}

MCL_MPI_EXPORT int MPI_Comm_size(MPI_Comm handle, int* size) {
  int status = kSuccess;
  Comm* comm = usableComm("MPI_Comm_size", handle, &status);
  if (comm == nullptr) return status;
  *size = comm->size;
  return kSuccess;
}

MCL_MPI_EXPORT int MPI_Comm_split(MPI_Comm handle, int color, int key,
                                  MPI_Comm* newcomm) {
  int status = kSuccess;
  Comm* parent = usableComm("MPI_Comm_split", handle, &status);
  if (parent == nullptr) return status;
  if (color < 0 && color != kUndefined)
    return fail(kErrArg, "MPI_Comm_split",
                "color " + std::to_string(color) +
                    " is negative (use MPI_UNDEFINED for no communicator)");
  if (parent->mcl == nullptr && color == kUndefined) {  // a world of one
    *newcomm = nullptr;                                 // MPI_COMM_NULL
    return kSuccess;
  }
  auto* comm = new Comm;
  if (parent->mcl != nullptr) {
    const mclResult_t r = mclCommSplit(
        parent->mcl, color == kUndefined ? MCL_SPLIT_NOCOLOR : color, key,
        &comm->mcl, nullptr);
    if (r != mclSuccess) {
      delete comm;
      return failMcl(
          r, "MPI_Comm_split", parent->mcl,
          "color " + std::to_string(color) + ", key " + std::to_string(key));
    }
    if (comm->mcl == nullptr) {  // MPI_UNDEFINED: MPI_COMM_NULL
      delete comm;
      *newcomm = nullptr;
      return kSuccess;
    }
    mclCommUserRank(comm->mcl, &comm->rank);
    mclCommCount(comm->mcl, &comm->size);
  }
  *newcomm = addComm(comm);
  return kSuccess;
}

MCL_MPI_EXPORT int MPI_Comm_free(MPI_Comm* handle) {
  if (handle == nullptr || *handle == &ompi_mpi_comm_world)
    return fail(kErrComm, "MPI_Comm_free",
                "comm is MPI_COMM_WORLD, which MPI_Finalize frees");
  // MLX frees a split's group whenever its last user lets go, which may be
  // after MPI_Finalize at exit: allowed.
  Comm* comm = removeComm(*handle);
  if (comm == nullptr)
    return fail(kErrComm, "MPI_Comm_free",
                "comm " + handleText(*handle, "a communicator of this job"));
  const mclResult_t r =
      comm->mcl != nullptr ? mclCommDestroy(comm->mcl) : mclSuccess;
  delete comm;
  *handle = nullptr;
  if (r != mclSuccess) return failMcl(r, "MPI_Comm_free", nullptr, "");
  return kSuccess;
}

MCL_MPI_EXPORT int MPI_Type_contiguous(int count, MPI_Datatype oldtype,
                                       MPI_Datatype* newtype) {
  int status = kSuccess;
  const Datatype* base =
      usableDatatype("MPI_Type_contiguous", "oldtype", oldtype, &status);
  if (base == nullptr) return status;
  if (count <= 0)
    return fail(kErrCount, "MPI_Type_contiguous",
                "count " + std::to_string(count) + " is not positive");
  *newtype = makeContiguous(count, *base);
  return kSuccess;
}

MCL_MPI_EXPORT int MPI_Type_commit(MPI_Datatype* handle) {
  auto* type = const_cast<Datatype*>(findDatatype(*handle));
  if (type == nullptr)
    return fail(kErrType, "MPI_Type_commit",
                "datatype " + handleText(*handle, "a datatype"));
  if (!type->committed) type->committed = true;  // predefined: read-only
  return kSuccess;
}

MCL_MPI_EXPORT int MPI_Op_create(MPI_User_function* function, int commute,
                                 MPI_Op* op) {
  if (function == nullptr)
    return fail(kErrOp, "MPI_Op_create", "function is NULL");
  *op = createOp(function, commute != 0);
  return kSuccess;
}

}  // extern "C"
