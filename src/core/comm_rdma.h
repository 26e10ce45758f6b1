// RDMA in communicator init: open the provider (the emulated fabric makes
// this rank Mac `rank`), then, after the first all-gather, make a queue
// pair per cable and channel toward each peer, exchange their addresses in
// a second all-gather, and connect them.
#pragma once

#include <memory>
#include <vector>

#include "core/bootstrap_client.h"
#include "transports/rdma/rdma_device.h"

struct mclComm;

namespace mcl {

// Whether ranks a and b talk over RDMA: under MCL_TRANSPORT=rdma, between
// hosts; on the emulated fabric every rank is a Mac of its own, so between
// any two ranks. Ranks of one real Mac use shared memory.
bool rdmaBetween(const mclComm& comm, int a, int b);

std::unique_ptr<transport::rdma::RdmaDevice> openRdmaDevice(
    const mclComm& comm);

// Every rank of the communicator calls it (it runs an all-gather round).
void wireRdma(mclComm& comm, const std::vector<int>& peers,
              BootstrapClient& bootstrap);

}  // namespace mcl
