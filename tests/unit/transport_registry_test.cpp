// The transport registry and the one decision of each pair's transport: a
// transport core has never heard of joins through addTransport alone, the
// priority order decides, and a pair nothing joins fails naming why.
#include <gtest/gtest.h>

#include <mcl/mcl.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "core/comm/transport_choice.h"
#include "core/registry/transport_registry.h"
#include "loopback_device.h"

namespace mcl {
namespace {

using transport::Verdict;

std::unique_ptr<transport::Device> makeLoopback(
    const transport::DeviceInit& init) {
  return std::make_unique<testing::LoopbackDevice>(init);
}

// Registered for one test, whatever happens in it.
class LoopbackRegistered {
 public:
  LoopbackRegistered() {
    addTransport({"loopback", false, false, makeLoopback, nullptr});
  }
  ~LoopbackRegistered() { removeTransport("loopback"); }
};

TEST(TransportRegistry, PriorityOrderAndWhatAutoTries) {
  std::vector<std::string> names;
  for (const TransportEntry& e : transportRegistry()) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"shm", "rdma", "tcp"}));
  names.clear();
  for (const TransportEntry& e : transportsFor("auto")) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"shm", "rdma", "tcp"}));
  names.clear();
  // A named transport first, then what is always kept (a rank's own
  // connection, ranks of one Mac under rdma).
  for (const TransportEntry& e : transportsFor("tcp")) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tcp", "shm"}));
}

TEST(TransportRegistry, UnknownNamesAreRefusedListingTheChoices) {
  try {
    transportsFor("carrier-pigeon");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("auto, shm, rdma, tcp"),
              std::string::npos)
        << e.what();
  }
  LoopbackRegistered loopback;
  EXPECT_NE(transportChoices().find("loopback"), std::string::npos);
  EXPECT_THROW(addTransport({"loopback", true, false, makeLoopback, nullptr}),
               Error);
}

// Two threads of this process as the ranks of a communicator over the
// loopback transport: init chooses it for the pair, the collectives run on
// it, and the topology names it as the pair's transport.
TEST(TransportRegistry, ATransportAddedByATestCarriesACommunicator) {
  LoopbackRegistered loopback;
  mclUniqueId id;
  ASSERT_EQ(mclGetUniqueId(&id), mclSuccess);
  constexpr int kRanks = 2;
  constexpr size_t kCount = 10000;  // several pipe slots per rank
  std::vector<std::vector<float>> results(kRanks);
  std::vector<std::string> topology(kRanks);
  std::vector<mclResult_t> codes(kRanks, mclInternalError);
  auto rank = [&](int r) {
    mclConfig_t config = MCL_CONFIG_INITIALIZER;
    config.transport = "loopback";
    config.timeoutSeconds = 30;
    mclComm_t comm = nullptr;
    mclResult_t rc = mclCommInitRankConfig(&comm, kRanks, id, r, &config);
    if (rc != mclSuccess) {
      codes[size_t(r)] = rc;
      return;
    }
    std::vector<float> data(kCount);
    for (size_t i = 0; i < kCount; ++i) data[i] = float(r + 1) * float(i % 97);
    rc = mclAllReduce(data.data(), data.data(), kCount, mclFloat32, mclSum,
                      comm, nullptr);
    results[size_t(r)] = data;
    size_t size = 0;
    if (rc == mclSuccess) rc = mclCommGetTopology(comm, nullptr, &size);
    std::string json(size, '\0');
    if (rc == mclSuccess) rc = mclCommGetTopology(comm, json.data(), &size);
    topology[size_t(r)] = json.c_str();
    mclCommDestroy(comm);
    codes[size_t(r)] = rc;
  };
  std::thread other(rank, 1);
  rank(0);
  other.join();
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_EQ(codes[size_t(r)], mclSuccess)
        << "rank " << r << ": " << mclGetLastError(nullptr);
    for (size_t i = 0; i < kCount; ++i)
      ASSERT_EQ(results[size_t(r)][i], 3.0f * float(i % 97)) << "element " << i;
    nlohmann::json t = nlohmann::json::parse(topology[size_t(r)]);
    ASSERT_EQ(t["paths"].size(), 1u) << topology[size_t(r)];
    EXPECT_EQ(t["paths"][0]["transport"], "loopback");
    EXPECT_EQ(
        t["memory"]["loopback_bytes"],
        2 * testing::LoopbackPipe::kSlots * testing::LoopbackPipe::kSlotBytes);
  }
}

// ---- the choice, on devices that answer as told ----

class ToldDevice final : public transport::Device {
 public:
  using Rule = std::function<Verdict(int, int)>;
  ToldDevice(const char* name, Rule reaches, Rule canConnect)
      : name_(name),
        reaches_(std::move(reaches)),
        canConnect_(std::move(canConnect)) {}
  const char* name() const override { return name_; }
  transport::LinkKind linkKind() const override {
    return transport::LinkKind::Socket;
  }
  Verdict reaches(int a, int b) const override { return reaches_(a, b); }
  Verdict canConnect(int a, int b) const override { return canConnect_(a, b); }
  void open(const std::vector<int>&, platform::Deadline) override {}
  std::vector<uint8_t> details() const override { return {}; }
  void learn(const std::vector<std::vector<uint8_t>>&,
             const topology::Cluster&) override {}
  void connect(const std::vector<int>&, transport::InitExchange&,
               platform::Deadline) override {}
  std::unique_ptr<transport::Connection> connection(
      int, transport::Channel) override {
    return nullptr;
  }
  transport::Waker& waker() override { return waker_; }
  uint64_t receiveCapacity() const override { return 0; }
  transport::BufferUse bufferUse() const override { return {}; }

 private:
  const char* name_;
  Rule reaches_;
  Rule canConnect_;
  testing::NapWaker waker_;
};

Verdict yes(int, int) { return Verdict::yes(); }
Verdict no(int, int) { return Verdict::no("never"); }
// Ranks 0 and 1 share a "host"; 2 is elsewhere.
Verdict sameHost(int a, int b) {
  return (a < 2) == (b < 2) ? Verdict::yes() : Verdict::no("other host");
}
Verdict others(int a, int b) {
  return a == b ? Verdict::no("itself") : Verdict::yes();
}

TEST(TransportChoice, TheFirstDeviceThatSaysYesJoinsThePair) {
  DeviceList devices;
  devices.push_back(std::make_unique<ToldDevice>("near", sameHost, sameHost));
  devices.push_back(std::make_unique<ToldDevice>("far", others, others));
  TransportCandidates c = transportCandidates(devices, 0, 3);
  EXPECT_EQ(c.open, (std::vector<bool>{true, true}));
  EXPECT_EQ(c.ofRank[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(c.ofRank[1], (std::vector<int>{2}));
  TransportChoice choice =
      chooseTransports(devices, c.open, 3, "auto", "test", "");
  EXPECT_EQ(choice.deviceOf(0, 1), 0);
  EXPECT_EQ(choice.deviceOf(1, 0), 0);
  EXPECT_EQ(choice.deviceOf(0, 2), 1);
  EXPECT_EQ(choice.deviceOf(2, 2), 0);
  EXPECT_EQ(choice.peersOver(2, 1), (std::vector<int>{0, 1}));
  EXPECT_TRUE(choice.joinsSomePair(0));
  EXPECT_TRUE(choice.joinsSomePair(1));
}

// A device that may fail a pair (Maybe) keeps the next one open, and takes
// the pair back once its details say no.
TEST(TransportChoice, MaybeKeepsTheNextDeviceAsTheFallback) {
  auto maybe = [](int a, int b) {
    return a == b ? Verdict::no("itself") : Verdict::maybe("needs details");
  };
  auto onlyPairOneTwo = [](int a, int b) {
    return (a == 1 && b == 2) || (a == 2 && b == 1) ? Verdict::yes()
                                                    : Verdict::no("no cable");
  };
  DeviceList devices;
  devices.push_back(
      std::make_unique<ToldDevice>("self", sameHost, [](int a, int b) {
        return a == b ? Verdict::yes() : Verdict::no("not itself");
      }));
  devices.push_back(
      std::make_unique<ToldDevice>("fast", maybe, onlyPairOneTwo));
  devices.push_back(std::make_unique<ToldDevice>("slow", others, others));
  TransportCandidates c = transportCandidates(devices, 1, 3);
  EXPECT_EQ(c.open, (std::vector<bool>{true, true, true}));
  TransportChoice choice =
      chooseTransports(devices, c.open, 3, "auto", "test", "");
  EXPECT_EQ(choice.deviceOf(1, 2), 1);
  EXPECT_EQ(choice.deviceOf(0, 2), 2);
  EXPECT_EQ(choice.deviceOf(0, 0), 0);
}

TEST(TransportChoice, APairNothingJoinsFailsNamingEveryReason) {
  DeviceList devices;
  devices.push_back(std::make_unique<ToldDevice>("near", sameHost, sameHost));
  TransportCandidates c = transportCandidates(devices, 0, 3);
  try {
    chooseTransports(devices, c.open, 3, "near", "comm x rank 0/3", "");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclInvalidUsage);
    const std::string what = e.what();
    EXPECT_NE(what.find("no transport joins ranks 0 and 2 under "
                        "MCL_TRANSPORT=near; near: other host"),
              std::string::npos)
        << what;
  }
}

TEST(TransportChoice, ANamedTransportThatJoinsNobodyIsAnError) {
  DeviceList devices;
  devices.push_back(std::make_unique<ToldDevice>("far", no, no));
  devices.push_back(std::make_unique<ToldDevice>("near", yes, yes));
  TransportCandidates c = transportCandidates(devices, 0, 2);
  EXPECT_FALSE(c.open[0]);
  try {
    chooseTransports(devices, c.open, 2, "far", "comm x rank 0/2", "vm");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "MCL_TRANSPORT=far, but it joins none of the 2 ranks (all 2 "
                  "ranks are on this host, vm): never"),
              std::string::npos)
        << e.what();
  }
}

// Ranks 0-1 and 1-2 have cables; 0-2 none. The cable 1-2's port is down.
Verdict cabled(int a, int b) {
  if (a == b) return Verdict::no("itself");
  if (a > b) std::swap(a, b);
  if (a == 0 && b == 1) return Verdict::yes();
  if (a == 1 && b == 2) return Verdict::broken("rank 2's rdma_en3: port down");
  return Verdict::noPath("no cable joins Mac 0 and Mac 2");
}
Verdict maybeOthers(int a, int b) {
  return a == b ? Verdict::no("itself") : Verdict::maybe("needs a cable");
}

DeviceList selfCabledSocket() {
  DeviceList devices;
  devices.push_back(std::make_unique<ToldDevice>(
      "self",
      [](int a, int b) {
        return a == b ? Verdict::yes() : Verdict::no("not itself");
      },
      [](int a, int b) {
        return a == b ? Verdict::yes() : Verdict::no("not itself");
      }));
  devices.push_back(std::make_unique<ToldDevice>("cable", maybeOthers, cabled));
  devices.push_back(std::make_unique<ToldDevice>("socket", others, others));
  return devices;
}

// Under auto a pair without a cable goes to the socket quietly, a pair
// whose cable is broken goes there as a fallback the choice lists.
TEST(TransportChoice, UnderAutoABrokenPairFallsBackAndIsListed) {
  DeviceList devices = selfCabledSocket();
  TransportCandidates c = transportCandidates(devices, 0, 3);
  TransportChoice choice =
      chooseTransports(devices, c.open, 3, "auto", "test", "");
  EXPECT_EQ(choice.deviceOf(0, 1), 1);
  EXPECT_EQ(choice.deviceOf(0, 2), 2);
  EXPECT_EQ(choice.deviceOf(1, 2), 2);
  ASSERT_EQ(choice.fallbacks().size(), 1u);
  const TransportFallback& f = choice.fallbacks().front();
  EXPECT_EQ(f.a, 1);
  EXPECT_EQ(f.b, 2);
  EXPECT_EQ(f.from, "cable");
  EXPECT_EQ(f.to, "socket");
  EXPECT_EQ(f.why, "rank 2's rdma_en3: port down");
}

// Named, the transport is strict: a pair of its kind it cannot join (no
// cable, or a broken one) fails init naming the pair and the reason, even
// when another transport could join it.
void expectStrictRefusal(Verdict (*rule)(int, int), int nranks,
                         const std::string& says) {
  DeviceList devices;
  devices.push_back(std::make_unique<ToldDevice>("cable", maybeOthers, rule));
  devices.push_back(std::make_unique<ToldDevice>("socket", yes, yes));
  try {
    chooseTransports(devices, {true, true}, nranks, "cable", "comm x", "");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclInvalidUsage);
    const std::string what = e.what();
    EXPECT_NE(what.find("MCL_TRANSPORT=cable cannot join ranks " + says),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("MCL_TRANSPORT=auto"), std::string::npos) << what;
  }
}

TEST(TransportChoice, ANamedTransportIsStrict) {
  expectStrictRefusal(cabled, 3, "0 and 2: no cable joins Mac 0 and Mac 2");
  expectStrictRefusal(
      [](int a, int b) {
        return a == b ? Verdict::no("itself") : Verdict::broken("port down");
      },
      2, "0 and 1: port down");
}

}  // namespace
}  // namespace mcl
