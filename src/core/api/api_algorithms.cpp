// The API of the algorithm table and the tuner: names, the choice for a
// call, and the model's predictions.
#include <cstddef>
#include <string>

#include "algorithms/algorithm_table.h"
#include "algorithms/collectives.h"
#include "algorithms/kernels/types.h"
#include "algorithms/tuner.h"
#include "core/api/api_guard.h"
#include "core/comm/comm.h"
#include "core/comm/handle_registry.h"

using mcl::apiCall;
using mcl::error;

namespace {

// The operation a query about `func` describes; throws on bad arguments.
mcl::OpArgs queriedOp(mclFunc_t func, size_t count, mclDataType_t type) {
  if (static_cast<int>(func) < 0 || func >= mclNumFuncs)
    throw error(mclInvalidArgument, "func %d is not an mclFunc_t (0..%d)",
                static_cast<int>(func), mclNumFuncs - 1);
  if (!mcl::kernels::isValidType(type))
    throw error(mclInvalidArgument,
                "datatype %d is not an mclDataType_t (0..%d)",
                static_cast<int>(type), mclNumTypes - 1);
  mcl::OpArgs op;
  op.kind = mcl::Collective(func);  // numbered alike (base/collective.h)
  op.count = count;
  op.type = type;
  return op;
}

}  // namespace

extern "C" {

mclResult_t mclGetAlgorithmName(mclFunc_t func, int index, const char** name) {
  return apiCall(__func__, [&] {
    if (name == nullptr) throw error(mclInvalidArgument, "name is NULL");
    queriedOp(func, 0, mclUint8);
    if (index < 0)
      throw error(mclInvalidArgument, "index %d is negative", index);
    *name = nullptr;
    int at = 0;
    for (const mcl::AlgorithmInfo& a : mcl::algorithmTable())
      if (static_cast<int>(a.collective) == static_cast<int>(func) &&
          at++ == index)
        *name = a.name;
  });
}

mclResult_t mclCommGetAlgorithm(const mclComm_t comm, mclFunc_t func,
                                size_t count, mclDataType_t type,
                                const char** name) {
  return apiCall(__func__, [&] {
    mcl::CommRef ref(comm);
    if (name == nullptr) throw error(mclInvalidArgument, "name is NULL");
    const mcl::OpArgs op = queriedOp(func, count, type);
    *name = mcl::algorithmName(mcl::chosenAlgorithm(op, ref->context));
  });
}

mclResult_t mclCommPredict(const mclComm_t comm, mclFunc_t func,
                           const char* algorithm, size_t count,
                           mclDataType_t type, double* microseconds) {
  return apiCall(__func__, [&] {
    mcl::CommRef ref(comm);
    if (microseconds == nullptr)
      throw error(mclInvalidArgument, "microseconds is NULL");
    if (algorithm == nullptr)
      throw error(mclInvalidArgument, "algorithm is NULL");
    const mcl::OpArgs op = queriedOp(func, count, type);
    const mcl::Collective collective = op.kind;
    const mcl::AlgorithmInfo* found = nullptr;
    for (const mcl::AlgorithmInfo& a : mcl::algorithmTable())
      if (a.collective == collective && a.name == std::string(algorithm))
        found = &a;
    if (found == nullptr)
      throw error(mclInvalidArgument, "%s has no algorithm \"%s\" (it has: %s)",
                  mcl::collectiveName(collective), algorithm,
                  mcl::algorithmNamesOf(collective).c_str());
    const mcl::AlgoContext& ctx = ref->context;
    *microseconds = mcl::predictUs(
        collective, found->id, mcl::operationBytes(collective, op, ctx.nranks),
        ctx.nranks, ctx.maxStepBytes, ctx.link);
  });
}

}  // extern "C"
