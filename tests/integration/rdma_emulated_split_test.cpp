// The emulated fabric under mclCommSplit and MCL_RDMA_DEVICES: a process
// keeps its Mac (and so its cables) in a smaller communicator, and
// MCL_RDMA_DEVICES leaves out the cables of the devices it does not list,
// down to either wire of a doubled pair.
#include <gtest/gtest.h>
#include <mcl/mcl.h>
#include <cstdint>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "build_paths.h"
#include "multiprocess.h"

namespace mcl::test {
namespace {

void useEmulatedFabric(const char* fixture) {
  const std::string fabric =
      mcl::testing::fixtureDir() + "/rdma/" + std::string(fixture);
  setenv("MCL_RDMA_PROVIDER", "emu", 1);
  setenv("MCL_EMU_FABRIC", fabric.c_str(), 1);
}

mclConfig_t rdmaConfig() {
  mclConfig_t config = MCL_CONFIG_INITIALIZER;
  config.transport = "rdma";
  config.timeoutSeconds = 20;
  return config;
}

// The tuner's count of cables per pair, from the communicator's topology.
int wiresOf(RankContext& ctx, mclComm_t comm) {
  size_t size = 0;
  if (!ctx.ok(mclCommGetTopology(comm, nullptr, &size), "topology size"))
    return -1;
  // Room over the size: RDMA's counters move between the two calls (its
  // keeper thread services the connections).
  std::string text(size + 256, '\0');
  size = text.size();
  if (!ctx.ok(mclCommGetTopology(comm, text.data(), &size), "topology"))
    return -1;
  text.resize(size - 1);
  return nlohmann::json::parse(text).at("tuner").value("wires", -1);
}

// An int32 sum of `value` over comm, checked against `want`.
void expectSum(RankContext& ctx, mclComm_t comm, int32_t value, int32_t want,
               const char* what) {
  std::vector<int32_t> data(4096, value);
  if (!ctx.ok(mclAllReduce(data.data(), data.data(), data.size(), mclInt32,
                           mclSum, comm, nullptr),
              what))
    return;
  for (int32_t v : data)
    if (v != want) {
      ctx.fail("%s: %d, expected %d", what, v, want);
      return;
    }
}

TEST(RdmaEmulatedSplit, ProcessesKeepTheirMacs) {
  // mesh4_doubled: Macs 0 and 1 have two cables, every other pair one.
  // Split into {0, 1} and {2, 3}: the second must see Macs 2 and 3 (one
  // wire), not the first two ranks' Macs (two).
  ASSERT_TRUE(runRanks(4, [](RankContext& ctx) {
    useEmulatedFabric("mesh4_doubled.json");
    mclConfig_t config = rdmaConfig();
    mclComm_t job = nullptr;
    if (!ctx.ok(mclCommInitRankConfig(&job, 4, ctx.id(), ctx.rank(), &config),
                "init"))
      return;
    mclComm_t half = nullptr;
    if (ctx.ok(mclCommSplit(job, ctx.rank() / 2, ctx.rank(), &half, &config),
               "split")) {
      const int want = ctx.rank() < 2 ? 2 : 1;
      const int wires = wiresOf(ctx, half);
      if (wires != want)
        ctx.fail("ranks %s: %d wires per pair, expected %d",
                 ctx.rank() < 2 ? "0,1" : "2,3", wires, want);
      const int32_t pairSum = ctx.rank() < 2 ? 0 + 1 : 2 + 3;
      expectSum(ctx, half, ctx.rank(), pairSum, "all-reduce on the half");
      ctx.ok(mclCommDestroy(half), "destroy the half");
    }
    ctx.ok(mclCommDestroy(job), "destroy");
  }));
}

TEST(RdmaEmulatedSplit, DeviceListKeepsOneWireOfADoubledPair) {
  // pair2: Mac 0's rdma_en2 and rdma_en5 are cabled to Mac 1's rdma_en3 and
  // rdma_en6. Each cable alone carries the traffic.
  const char* const ends[][2] = {{"rdma_en2", "rdma_en3"},
                                 {"rdma_en5", "rdma_en6"},
                                 {"rdma_en2,rdma_en5", ""}};
  const int wantWires[] = {1, 1, 2};
  for (int k = 0; k < 3; ++k) {
    ASSERT_TRUE(
        runRanks(2,
                 [&](RankContext& ctx) {
                   useEmulatedFabric("pair2.json");
                   setenv("MCL_RDMA_DEVICES", ends[k][ctx.rank()], 1);
                   mclConfig_t config = rdmaConfig();
                   mclComm_t comm = nullptr;
                   if (!ctx.ok(mclCommInitRankConfig(&comm, 2, ctx.id(),
                                                     ctx.rank(), &config),
                               "init"))
                     return;
                   const int wires = wiresOf(ctx, comm);
                   if (wires != wantWires[k])
                     ctx.fail("MCL_RDMA_DEVICES=%s: %d wires, expected %d",
                              ends[k][ctx.rank()], wires, wantWires[k]);
                   expectSum(ctx, comm, ctx.rank() + 1, 3, "all-reduce");
                   ctx.ok(mclCommDestroy(comm), "destroy");
                 }))
        << "case " << k;
  }
}

// Init on `fixture` with MCL_RDMA_DEVICES=devices must fail with a message
// that mentions `expected`.
void expectInitRefused(RankContext& ctx, const char* fixture,
                       const char* devices, const std::string& expected) {
  useEmulatedFabric(fixture);
  setenv("MCL_RDMA_DEVICES", devices, 1);
  mclConfig_t config = rdmaConfig();
  config.timeoutSeconds = 5;
  mclComm_t comm = nullptr;
  if (mclCommInitRankConfig(&comm, 2, ctx.id(), ctx.rank(), &config) ==
      mclSuccess) {
    ctx.fail("init succeeded with MCL_RDMA_DEVICES=%s", devices);
    mclCommDestroy(comm);
    return;
  }
  const std::string message = mclGetLastError(nullptr);
  if (message.find(expected) == std::string::npos)
    ctx.fail("the error does not mention '%s': %s", expected.c_str(),
             message.c_str());
}

TEST(RdmaEmulatedSplit, EndsKeepingDifferentCablesAreRefused) {
  // Rank 0 keeps the first cable of pair2, rank 1 the second: neither may
  // pair its queue pair with one on another cable, and every rank names the
  // cable each end left out.
  ASSERT_TRUE(runRanks(2, [](RankContext& ctx) {
    expectInitRefused(ctx, "pair2.json",
                      ctx.rank() == 0 ? "rdma_en2" : "rdma_en6",
                      "rank 1 leaves rdma_en3 out (MCL_RDMA_DEVICES); rank 0 "
                      "leaves rdma_en5 out");
  }));
}

TEST(RdmaEmulatedSplit, DeviceListWithoutTheCableNamesThePeer) {
  ASSERT_TRUE(runRanks(2, [](RankContext& ctx) {
    expectInitRefused(ctx, "pair.json", "rdma_en9",
                      "cannot join ranks 0 and 1: rank 0 leaves rdma_en2 out");
  }));
}

}  // namespace
}  // namespace mcl::test
