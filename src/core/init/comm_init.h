// Making a communicator: the rendezvous, the transports' phases, the
// topology and the tuner, alike on every rank (comm_init.cpp).
#pragma once

#include <memory>

#include "core/comm/comm.h"
#include "core/params/settings.h"
#include "mcl/mcl.h"

namespace mcl {

// Collective: joins the rendezvous and connects to every peer. emuMac: the
// process' Mac on the emulated fabric (-1: its rank here).
std::unique_ptr<mclComm> initComm(int nranks, const mclUniqueId& id, int rank,
                                  const mclConfig_t* config, int emuMac = -1);
// The same with the settings read already (loadSettings), and the
// arguments checked (checkInitArguments): what an init that runs later,
// on another thread, keeps of its call.
std::unique_ptr<mclComm> initComm(int nranks, const mclUniqueId& id, int rank,
                                  const CommSettings& settings, int emuMac);
// Throws mclInvalidArgument for a size, rank or id init cannot take.
void checkInitArguments(int nranks, const mclUniqueId& id, int rank);

}  // namespace mcl
