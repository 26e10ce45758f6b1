#include "qualify/qualify_report.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "common/json_writer.h"
#include "common/run_metadata.h"

namespace mcl::perf {

namespace {

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

void writeEnd(JsonWriter& w, const CableEnd& e) {
  w.beginObject();
  w.key("host");
  w.integer(e.host);
  w.key("name");
  w.string(e.hostName);
  w.key("rank");
  w.integer(e.rank);
  w.key("end");
  w.string(e.end);
  w.endObject();
}

void writeReasons(JsonWriter& w, const std::vector<std::string>& reasons) {
  w.key("reasons");
  w.beginArray();
  for (const std::string& reason : reasons) w.string(reason);
  w.endArray();
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
      "fastest round trip is over 5x theirs and 1 ms longer; DEAD when "
      "nothing passes\n",
      nominalFraction(plan.transport) * 100,
      plan.emulated ? " (rates are not judged on the emulator)" : "");
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
  JsonWriter w;
  w.beginObject();
  writeRunMetadata(w, options, "qualify", libraryVersion, startTime);
  w.key("transport");
  w.string(plan.transport);
  w.key("emulated");
  w.boolean(plan.emulated);
  w.key("passed");
  w.boolean(r.passed());
  w.key("cables");
  w.beginArray();
  for (size_t i = 0; i < plan.cables.size(); ++i) {
    const CableUnderTest& c = plan.cables[i];
    const CableMeasurement& m = r.cables[i];
    w.beginObject();
    w.key("kind");
    w.string(c.kind);
    w.key("nominal_gbps");
    w.number(c.nominalGbps);
    w.key("wire");
    w.integer(c.wire);
    w.key("wires");
    w.integer(c.wires);
    w.key("a");
    writeEnd(w, c.a);
    w.key("b");
    writeEnd(w, c.b);
    w.key("round_trip_us");
    if (m.dead) {
      w.null();
    } else {
      w.beginObject();
      w.key("min");
      w.number(m.roundTripUs.min);
      w.key("median");
      w.number(m.roundTripUs.median);
      w.key("p99");
      w.number(m.roundTripUs.p99);
      w.endObject();
    }
    w.key("a_to_b_gbytes_per_s");
    if (m.dead)
      w.null();
    else
      w.number(m.gbpsAtoB);
    w.key("b_to_a_gbytes_per_s");
    if (m.dead)
      w.null();
    else
      w.number(m.gbpsBtoA);
    w.key("verdict");
    w.string(verdictName(m.verdict));
    writeReasons(w, m.reasons);
    w.endObject();
  }
  w.endArray();
  w.key("not_tested");
  w.beginArray();
  for (const std::string& note : plan.notes) w.string(note);
  w.endArray();
  w.key("macs");
  w.beginArray();
  for (size_t i = 0; i < plan.macs.size(); ++i) {
    w.beginObject();
    w.key("host");
    w.integer(plan.macs[i].host);
    w.key("name");
    w.string(plan.macs[i].name);
    w.key("rank");
    w.integer(plan.macs[i].rank);
    w.key("memcpy_gbytes_per_s");
    w.number(r.macs[i].speed.memcpyGBps);
    w.key("reduce_gbytes_per_s");
    w.number(r.macs[i].speed.reduceGBps);
    w.key("verdict");
    w.string(verdictName(r.macs[i].verdict));
    writeReasons(w, r.macs[i].reasons);
    w.endObject();
  }
  w.endArray();
  w.endObject();
  return w.text();
}

}  // namespace mcl::perf
