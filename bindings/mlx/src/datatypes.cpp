#include "datatypes.h"

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "predefined.h"

namespace mcl::mpi {

namespace {

struct Named {
  const mcl_mpi_predefined* handle;
  Datatype type;
};

// In MLX's order of lookup.
const Named kPredefined[] = {
    {&ompi_mpi_c_bool, {Kind::Bool, 1, "MPI_C_BOOL"}},
    {&ompi_mpi_int8_t, {Kind::Int8, 1, "MPI_INT8_T"}},
    {&ompi_mpi_uint8_t, {Kind::Uint8, 1, "MPI_UINT8_T"}},
    {&ompi_mpi_int16_t, {Kind::Int16, 2, "MPI_INT16_T"}},
    {&ompi_mpi_uint16_t, {Kind::Uint16, 2, "MPI_UINT16_T"}},
    {&ompi_mpi_int32_t, {Kind::Int32, 4, "MPI_INT32_T"}},
    {&ompi_mpi_uint32_t, {Kind::Uint32, 4, "MPI_UINT32_T"}},
    {&ompi_mpi_int64_t, {Kind::Int64, 8, "MPI_INT64_T"}},
    {&ompi_mpi_uint64_t, {Kind::Uint64, 8, "MPI_UINT64_T"}},
    {&ompi_mpi_float, {Kind::Float32, 4, "MPI_FLOAT"}},
    {&ompi_mpi_double, {Kind::Float64, 8, "MPI_DOUBLE"}},
    {&ompi_mpi_c_complex, {Kind::Complex64, 8, "MPI_C_COMPLEX"}},
};

// Made types live until the process ends: MLX makes two, once.
std::mutex& madeTypesMutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::map<const void*, std::unique_ptr<Datatype>>& madeTypes() {
  static auto* m = new std::map<const void*, std::unique_ptr<Datatype>>;
  return *m;
}

}  // namespace

const Datatype* findDatatype(MPI_Datatype handle) {
  for (const Named& n : kPredefined)
    if (handle == n.handle) return &n.type;
  std::lock_guard<std::mutex> lock(madeTypesMutex());
  auto it = madeTypes().find(handle);
  return it == madeTypes().end() ? nullptr : it->second.get();
}

MPI_Datatype makeContiguous(int count, const Datatype& base) {
  auto type = std::make_unique<Datatype>(Datatype{
      Kind::Contiguous, base.bytes * size_t(count), "", count, &base, false});
  void* handle = type.get();
  std::lock_guard<std::mutex> lock(madeTypesMutex());
  madeTypes()[handle] = std::move(type);
  return handle;
}

std::string datatypeText(const Datatype& type) {
  if (type.kind != Kind::Contiguous) return type.name;
  return "a contiguous type of " + std::to_string(type.count) + " " +
         datatypeText(*type.base);
}

std::string handleText(const void* handle, const char* what) {
  char text[64];
  snprintf(text, sizeof(text), "%p (not %s)", handle, what);
  return text;
}

}  // namespace mcl::mpi
