#include "plan/plan_flags.h"

#include <CLI/CLI.hpp>

#include <string>

#include "common/flag_sets.h"
#include "common/options.h"
#include "plan/model_shape.h"

namespace mcl::perf {

namespace {

std::string presetList() {
  std::string names;
  for (const std::string& n : plan::modelPresetNames())
    names += (names.empty() ? "" : ", ") + n;
  return names;
}

// A positive decimal flag (GB/s, TFLOPS).
void addRateFlag(CLI::App* command, const std::string& names, double* value,
                 const std::string& help, const std::string& unit) {
  command
      ->add_option_function<double>(
          names,
          [value, names](double v) {
            if (!(v > 0) || v > 1e6)
              throw CLI::ValidationError(names + " takes a number above 0");
            *value = v;
          },
          help)
      ->type_name(unit);
}

}  // namespace

void addPlanFlags(CLI::App* command, Options* o) {
  plan::PlanOptions* p = &o->plan;
  command->footer(
      "From the cluster this job runs on (each rank's memory and decode "
      "speed, the links' all-reduces and hops, measured now) or a saved one "
      "(--from), and a model: every layout that fits (one rank, "
      "tensor-parallel, pipeline-parallel, both, on the first k ranks), "
      "each with its memory per rank, predicted decode tokens/s, prefill "
      "time and share of each step on the links; the best first, with the "
      "launch lines for it. docs/planning.md says how each figure is made.");
  addTextFlag(
      command, "--model", [p](const std::string& v) { p->model = v; },
      "a Hugging Face config.json, or a preset: " + presetList(),
      "CONFIG.json|PRESET")
      ->required();
  command
      ->add_option_function<int>(
          "--bits",
          [p](int bits) {
            if (bits != 16 && bits != 8 && bits != 4)
              throw CLI::ValidationError("--bits takes 16, 8 or 4, not " +
                                         std::to_string(bits));
            p->bits = bits;
          },
          "weight precision: 16 (bf16, the default), 8 or 4 (MLX's "
          "quantization: a 16-bit scale and bias per group)")
      ->type_name("16|8|4");
  addIntFlag(
      command, "--group-size", 8, 4096, [p](int n) { p->groupSize = n; },
      "elements per scale and bias of quantized weights (default 64)");
  addIntFlag(
      command, "--context", 1, 1 << 24, [p](int n) { p->context = n; },
      "tokens in the KV cache while decoding (default 4096)");
  addIntFlag(
      command, "--prompt", 0, 1 << 24, [p](int n) { p->prompt = n; },
      "tokens of the prompt whose prefill time is predicted (default 2048; "
      "0: none)");
  addIntFlag(
      command, "--batch", 1, 1 << 16, [p](int n) { p->batch = n; },
      "sequences decoded together (default 1)");
  addTextFlag(
      command, "--from", [p](const std::string& v) { p->fromPath = v; },
      "plan from a cluster saved by --save, without starting ranks", "FILE");
  addTextFlag(
      command, "--save", [p](const std::string& v) { p->savePath = v; },
      "also write the measured cluster to FILE (for --from)", "FILE");
  command->add_flag("--json", p->json,
                    "print one JSON object (layouts, best first) instead of "
                    "the table");
  addRateFlag(command, "--mem-bw", &p->memBwGBps,
              "every rank's memory bandwidth for decoding, in GB/s, instead "
              "of the measured (or a Mac chip's published) figure",
              "GB/s");
  addRateFlag(command, "--tflops", &p->tflops,
              "every rank's compute for prefill, in TFLOPS, instead of the "
              "measured figure",
              "TFLOPS");
  addRankFlags(command, o,
               "mclConfig_t.transport for the measured links, e.g. auto, shm "
               "or tcp (default MCL_TRANSPORT, else auto)");
}

}  // namespace mcl::perf
