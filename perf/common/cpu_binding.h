// Pinning forked ranks to cores, as mpirun does by default: two spinning
// ranks that the scheduler leaves on one core pay a context switch per
// message (microseconds instead of a tenth of one), and the run tells more
// about the scheduler than about mcl.
#pragma once

namespace mcl::perf {

// Binds the calling process to the rank-th CPU it may run on, round-robin
// when ranks outnumber CPUs: left to the scheduler, 4 ranks on 2 cores
// start 3 to a core often enough, and an 8-byte all-reduce then takes 11 us
// instead of 5.7 until it spreads them (measured: the first size of every
// run). Linux only; elsewhere (macOS has no binding API) it does nothing.
// Returns the CPU, or -1 when unbound.
int bindToCore(int rank);

}  // namespace mcl::perf
