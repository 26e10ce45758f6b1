// MCL_TUNE_PROBE=1: at the end of init, the tuner's link model is measured
// instead of taken from the defaults, with a few short collectives on the
// communicator itself: small direct all-reduces give the cost of a hop, a
// ring all-gather the bandwidth, a ring reduce-scatter the folding rate.
// Every rank keeps the slowest rank's figures, so all decide alike.
#pragma once

#include "core/comm/comm.h"

namespace mcl {

// Collective; replaces comm.context.link. Costs a few milliseconds.
void probeLinkModel(mclComm& comm);

}  // namespace mcl
