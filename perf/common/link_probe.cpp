#include "common/link_probe.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mcl::perf {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kMaxMessages = 256;

ProbeResult failed(const char* call, mclResult_t result) {
  ProbeResult r;
  r.result = result;
  r.call = call;
  r.error = std::string(call) + ": " + mclGetLastError(nullptr);
  return r;
}

#define PROBE_CALL(call, expr)                                       \
  do {                                                               \
    const mclResult_t probeResult = (expr);                          \
    if (probeResult != mclSuccess) return failed(call, probeResult); \
  } while (0)

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

ProbeResult roundTrips(mclComm_t comm, int peer, bool starter, size_t bytes,
                       int count, int warmup, char* buffer,
                       SampleSummary* summary) {
  std::vector<double> samples;
  samples.reserve(size_t(count));
  for (int i = 0; i < warmup + count; ++i) {
    const auto start = Clock::now();
    if (starter) {
      PROBE_CALL("mclSend",
                 mclSend(buffer, bytes, mclUint8, peer, comm, nullptr));
      PROBE_CALL("mclRecv",
                 mclRecv(buffer, bytes, mclUint8, peer, comm, nullptr));
    } else {
      PROBE_CALL("mclRecv",
                 mclRecv(buffer, bytes, mclUint8, peer, comm, nullptr));
      PROBE_CALL("mclSend",
                 mclSend(buffer, bytes, mclUint8, peer, comm, nullptr));
    }
    if (i >= warmup) samples.push_back(secondsSince(start) * 1e6);
  }
  if (starter) *summary = summarize(samples);
  return {};
}

ProbeResult streamBandwidth(mclComm_t comm, int me, int sender, int receiver,
                            size_t messageBytes, double targetSeconds,
                            char* buffer, double* gbps) {
  const bool sending = me == sender;
  const int peer = sending ? receiver : sender;
  char ack = 0;
  // One timed message (and its acknowledgement) says how many fill the
  // target time; the sender tells the receiver.
  int64_t messages = 1;
  if (sending) {
    const auto start = Clock::now();
    PROBE_CALL("mclSend",
               mclSend(buffer, messageBytes, mclUint8, peer, comm, nullptr));
    PROBE_CALL("mclRecv", mclRecv(&ack, 1, mclUint8, peer, comm, nullptr));
    const double first = std::max(secondsSince(start), 1e-6);
    messages =
        std::clamp<int64_t>(int64_t(targetSeconds / first), 1, kMaxMessages);
    PROBE_CALL("mclSend", mclSend(&messages, 1, mclInt64, peer, comm, nullptr));
  } else {
    PROBE_CALL("mclRecv",
               mclRecv(buffer, messageBytes, mclUint8, peer, comm, nullptr));
    PROBE_CALL("mclSend", mclSend(&ack, 1, mclUint8, peer, comm, nullptr));
    PROBE_CALL("mclRecv", mclRecv(&messages, 1, mclInt64, peer, comm, nullptr));
    if (messages < 1 || messages > kMaxMessages) {
      ProbeResult r;
      r.result = mclRemoteError;
      r.call = "mclRecv";
      r.error = "rank " + std::to_string(peer) + " announced " +
                std::to_string(messages) + " messages";
      return r;
    }
  }
  const auto start = Clock::now();
  for (int64_t i = 0; i < messages; ++i) {
    if (sending)
      PROBE_CALL("mclSend",
                 mclSend(buffer, messageBytes, mclUint8, peer, comm, nullptr));
    else
      PROBE_CALL("mclRecv",
                 mclRecv(buffer, messageBytes, mclUint8, peer, comm, nullptr));
  }
  if (sending) {
    PROBE_CALL("mclRecv", mclRecv(&ack, 1, mclUint8, peer, comm, nullptr));
    *gbps = double(messages) * double(messageBytes) / secondsSince(start) / 1e9;
  } else {
    PROBE_CALL("mclSend", mclSend(&ack, 1, mclUint8, peer, comm, nullptr));
  }
  return {};
}

#undef PROBE_CALL

}  // namespace mcl::perf
