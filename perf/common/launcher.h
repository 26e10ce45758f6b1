// -np N: fork N ranks, create one unique id (its rendezvous runs in this
// process) and hand it to them, wait for them. When a rank dies by a signal
// or exits non-zero, the others get a grace period to finish, then are
// terminated; each failure is reported as "rank K died with signal S" or
// "rank K exited with status X".
#pragma once

#include <mcl/mcl.h>

#include <functional>

namespace mcl::perf {

// Runs body(rank, id) in nranks forked processes; body's return value is
// the process' exit status. Returns mcl-perf's exit status: kExitOk when
// every rank exited 0, else kExitFailure (128 + the signal when mcl-perf
// itself was interrupted).
// bindCores: pin rank i to the i-th allowed CPU (see cpu_binding.h).
int launchLocalRanks(int nranks, bool bindCores,
                     const std::function<int(int, const mclUniqueId&)>& body);

}  // namespace mcl::perf
