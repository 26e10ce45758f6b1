// The failure drill of `mcl-perf report`: with MCLPERF_KILL_RANK=R and
// MCLPERF_KILL_AFTER_MS=T set, rank R of a benchmark kills itself (SIGKILL,
// no farewell, as a crash would) T ms after the communicator is up, and
// every other rank, when its call fails, prints how long after the kill it
// noticed. Ranks leave init together (its last step is a barrier), so each
// measures from its own init plus T. (Not MCL_*: mcl warns about MCL_*
// variables it does not know, and these are mcl-perf's.)
#pragma once

namespace mcl::perf {

// Call once the communicator is up.
void armKillDrill(int rank);

// When a drill is armed: "noticed N s after rank R was killed", on stderr.
void reportKillDrill(int rank);

}  // namespace mcl::perf
