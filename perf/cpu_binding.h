// Pinning forked ranks to cores, as mpirun does by default: two spinning
// ranks that the scheduler leaves on one core pay a context switch per
// message (microseconds instead of a tenth of one), and the run tells more
// about the scheduler than about mcl.
#pragma once

namespace mcl::perf {

// Binds the calling process to the rank-th CPU it may run on, when the
// ranks fit on the CPUs. Linux only; elsewhere (macOS has no binding API)
// it does nothing. Returns the CPU, or -1 when unbound.
int bindToCore(int rank, int nranks);

}  // namespace mcl::perf
