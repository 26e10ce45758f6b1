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

std::unique_ptr<transport::rdma::RdmaDevice> openRdmaDevice(
    const mclComm& comm);

// Every rank of the communicator calls it (it runs an all-gather round).
void wireRdma(mclComm& comm, const std::vector<int>& peers,
              BootstrapClient& bootstrap);

}  // namespace mcl
