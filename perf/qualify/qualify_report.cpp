#include "qualify/qualify_report.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/run_metadata.h"

namespace mcl::perf {

namespace {

using nlohmann::ordered_json;

std::string wireText(const CableUnderTest& c) {
  if (c.wires < 2) return "";
  return " (wire " + std::to_string(c.wire + 1) + " of " +
         std::to_string(c.wires) + ")";
}

std::string nominalText(const CableUnderTest& c) {
  char buf[32];
  if (c.nominalGbps > 0)
    std::snprintf(buf, sizeof buf, "%g Gb/s", c.nominalGbps);
  else
    std::snprintf(buf, sizeof buf, "?");
  return buf;
}

std::string joined(const std::vector<std::string>& reasons) {
  std::string text;
  for (const std::string& r : reasons) text += (text.empty() ? "" : "; ") + r;
  return text;
}

void printCables(const QualifyResults& r, std::FILE* out) {
  const QualifyPlan& plan = r.plan;
  std::fprintf(out, "#\n# Cables (%zu, over %s%s)\n", plan.cables.size(),
               plan.transport.c_str(), plan.emulated ? ", EMULATED" : "");
  size_t width = 4;
  for (const CableUnderTest& c : plan.cables)
    width = std::max(width, (c.name() + wireText(c)).size());
  std::fprintf(out, "# %5s  %-*s  %-11s %10s  %9s  %9s  %9s  %s\n", "cable",
               int(width), "ends", "kind", "nominal", "rtt (us)", "a->b GB/s",
               "b->a GB/s", "verdict");
  for (size_t i = 0; i < plan.cables.size(); ++i) {
    const CableUnderTest& c = plan.cables[i];
    const CableMeasurement& m = r.cables[i];
    std::fprintf(out, "  %5zu  %-*s  %-11s %10s", i, int(width),
                 (c.name() + wireText(c)).c_str(), c.kind.c_str(),
                 nominalText(c).c_str());
    if (m.dead)
      std::fprintf(out, "  %9s  %9s  %9s", "-", "-", "-");
    else
      std::fprintf(out, "  %9.2f  %9.3f  %9.3f", m.roundTripUs.median,
                   m.gbpsAtoB, m.gbpsBtoA);
    std::fprintf(out, "  %s%s%s\n", verdictName(m.verdict),
                 m.reasons.empty() ? "" : ": ", joined(m.reasons).c_str());
  }
  for (const std::string& note : plan.notes)
    std::fprintf(out, "# not tested: %s\n", note.c_str());
}

void printMacs(const QualifyResults& r, std::FILE* out) {
  const QualifyPlan& plan = r.plan;
  size_t width = 4;
  for (const MacUnderTest& m : plan.macs)
    width = std::max(width, m.name.size());
  std::fprintf(out,
               "#\n# Macs (%zu; one core each, 64 MiB buffers; reduce: float32 "
               "sum of two buffers, GB/s of result)\n",
               plan.macs.size());
  std::fprintf(out, "# %-*s  %6s  %12s  %12s  %s\n", int(width), "host", "rank",
               "memcpy GB/s", "reduce GB/s", "verdict");
  for (size_t i = 0; i < plan.macs.size(); ++i) {
    const MacMeasurement& m = r.macs[i];
    std::fprintf(out, "  %-*s  %6d  %12.2f  %12.2f  %s%s%s\n", int(width),
                 plan.macs[i].name.c_str(), plan.macs[i].rank,
                 m.speed.memcpyGBps, m.speed.reduceGBps, verdictName(m.verdict),
                 m.reasons.empty() ? "" : ": ", joined(m.reasons).c_str());
  }
}

ordered_json endJson(const CableEnd& e) {
  return {
      {"host", e.host},
      {"name", e.hostName},
      {"rank", e.rank},
      {"end", e.end},
  };
}

}  // namespace

bool QualifyResults::passed() const {
  for (const CableMeasurement& c : cables)
    if (c.verdict != Verdict::Ok) return false;
  for (const MacMeasurement& m : macs)
    if (m.verdict != Verdict::Ok) return false;
  return true;
}

void printQualifyReport(const QualifyResults& r, std::FILE* out) {
  const QualifyPlan& plan = r.plan;
  std::fprintf(out,
               "# mcl-perf qualify: each cable alone, over %s%s: round trips "
               "of 8 B, then a stream each way; then each Mac\n",
               plan.transport.c_str(),
               plan.emulated
                   ? " on the EMULATED Thunderbolt fabric "
                     "(MCL_RDMA_PROVIDER=emu: the emulator's figures, "
                     "not hardware's)"
                   : "");
  std::fprintf(
      out,
      "# A cable is SLOW when a direction moves under %.0f%% of its "
      "nominal rate or under half the median of its kind%s, or its "
      "fastest round trip is over 5x theirs and 1 ms longer; LOSSY when "
      "it sends over 1 %s in 100 again; FLAPPING when its link went down "
      "during its test; DEAD when nothing passes\n",
      nominalFraction(plan.transport) * 100,
      plan.emulated ? " (rates are not judged on the emulator)" : "",
      plan.transport == "rdma" ? "frame" : "byte");
  printCables(r, out);
  printMacs(r, out);
  std::fprintf(out, "#\n");
  std::vector<std::string> failures;
  for (size_t i = 0; i < plan.cables.size(); ++i)
    if (r.cables[i].verdict != Verdict::Ok)
      failures.push_back("cable " + std::to_string(i) + " (" +
                         plan.cables[i].name() + ") " +
                         verdictName(r.cables[i].verdict));
  for (size_t i = 0; i < plan.macs.size(); ++i)
    if (r.macs[i].verdict != Verdict::Ok)
      failures.push_back("Mac " + plan.macs[i].name + " " +
                         verdictName(r.macs[i].verdict));
  if (failures.empty())
    std::fprintf(out, "# Qualify: PASS: %zu cable(s) and %zu Mac(s) OK\n",
                 plan.cables.size(), plan.macs.size());
  else
    std::fprintf(out, "# Qualify: FAIL: %s\n", joined(failures).c_str());
  std::fflush(out);
}

std::string qualifyJson(const QualifyResults& r, const Options& options,
                        int libraryVersion, const std::string& startTime) {
  const QualifyPlan& plan = r.plan;
  ordered_json report = ordered_json::object();
  writeRunMetadata(report, options, "qualify", libraryVersion, startTime);
  report["transport"] = plan.transport;
  report["emulated"] = plan.emulated;
  report["passed"] = r.passed();
  ordered_json cables = ordered_json::array();
  for (size_t i = 0; i < plan.cables.size(); ++i) {
    const CableUnderTest& c = plan.cables[i];
    const CableMeasurement& m = r.cables[i];
    // A dead cable has no figures: null, not zeros.
    const auto figure = [&](double value) {
      return m.dead ? ordered_json() : ordered_json(value);
    };
    ordered_json cable = ordered_json::object();
    cable["kind"] = c.kind;
    cable["nominal_gbps"] = c.nominalGbps;
    cable["wire"] = c.wire;
    cable["wires"] = c.wires;
    cable["a"] = endJson(c.a);
    cable["b"] = endJson(c.b);
    cable["round_trip_us"] =
        m.dead ? ordered_json()
               : ordered_json{{"min", m.roundTripUs.min},
                              {"median", m.roundTripUs.median},
                              {"p99", m.roundTripUs.p99}};
    cable["a_to_b_gbytes_per_s"] = figure(m.gbpsAtoB);
    cable["b_to_a_gbytes_per_s"] = figure(m.gbpsBtoA);
    // What was sent again, and the link's losses during the test.
    cable["bytes_sent"] = m.bytesSent;
    cable["bytes_resent"] = m.bytesResent;
    cable["link_losses"] = m.linkLosses;
    cable["verdict"] = verdictName(m.verdict);
    cable["reasons"] = m.reasons;
    cables.push_back(std::move(cable));
  }
  report["cables"] = std::move(cables);
  report["not_tested"] = plan.notes;
  ordered_json macs = ordered_json::array();
  for (size_t i = 0; i < plan.macs.size(); ++i)
    macs.push_back({{"host", plan.macs[i].host},
                    {"name", plan.macs[i].name},
                    {"rank", plan.macs[i].rank},
                    {"memcpy_gbytes_per_s", r.macs[i].speed.memcpyGBps},
                    {"reduce_gbytes_per_s", r.macs[i].speed.reduceGBps},
                    {"verdict", verdictName(r.macs[i].verdict)},
                    {"reasons", r.macs[i].reasons}});
  report["macs"] = std::move(macs);
  return reportText(report);
}

}  // namespace mcl::perf
