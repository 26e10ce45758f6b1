#include "plan/plan_report.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace mcl::perf::plan {

namespace {

using nlohmann::json;

// v with `decimals` digits after the point.
std::string fixed(double v, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
}

std::string joined(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string stageText(const Layout& l) {
  std::vector<std::string> parts;
  for (int n : l.stageLayers) parts.push_back(std::to_string(n));
  return joined(parts, "+");
}

// How to start the layout: mlx-lm's sharded example under mlx.launch on
// mcl's MPI library, torchrun with the "mcl" backend, mcl's variables.
std::string launchLines(const Layout& l, const ClusterFigures& c) {
  const std::vector<std::string> hosts = layoutHosts(l, c);
  const int n = l.tp * l.pp;
  std::string out;
  json hostfile = json::array();
  for (const std::string& h : hosts)
    hostfile.push_back({{"ssh", h}, {"ips", json::array()}});
  out += "# mlx.launch hostfile (hosts.json):\n" + hostfile.dump() + "\n";
  out +=
      "# mlx-lm on mcl (S: the same 32 hex digits everywhere, openssl "
      "rand -hex 16):\n";
  out +=
      "mlx.launch --backend mpi --hostfile hosts.json --env "
      "MLX_MPI_LIBNAME=<mcl>/lib/libmcl_mpi.dylib --env MCL_SECRET=$S -- "
      "python3 sharded_generate.py --model <model>";
  if (l.pp > 1 && l.tp == 1) out += " --pipeline";
  out += "\n";
  if (l.tp > 1 && l.pp > 1)
    out +=
        "# (tp x pp: mlx-lm's example runs one or the other; split the "
        "group by stage for both)\n";
  out += "# torchrun, one command per Mac (i = 0.." + std::to_string(n - 1) +
         "):\n";
  out += "MCL_SECRET=$S torchrun --nnodes " + std::to_string(n) +
         " --nproc_per_node 1 --node_rank i --master_addr " + hosts.front() +
         " --master_port 29500 your_script.py  # "
         "dist.init_process_group(\"mcl\")\n";
  out += "# mcl's own variables, on Mac i:\n";
  out += "MCL_RANK=i MCL_WORLD_SIZE=" + std::to_string(n) +
         " MCL_ROOT=" + hosts.front() + ":29500 MCL_SECRET=$S\n";
  return out;
}

}  // namespace

std::vector<std::string> layoutHosts(const Layout& l, const ClusterFigures& c) {
  std::vector<std::string> hosts;
  for (int r = 0; r < l.tp * l.pp; ++r)
    hosts.push_back(c.ranks[r].host.empty() ? "rank" + std::to_string(r)
                                            : c.ranks[r].host);
  return hosts;
}

std::string planTable(const ModelShape& m, const ClusterFigures& c,
                      const PlanInputs& in, const std::vector<Layout>& all) {
  const ParameterCounts p = countParameters(m);
  std::string out =
      "# mcl-perf plan: " + m.name + " (" + fixed(p.total / 1e9, 2) +
      " B parameters, " + fixed(p.total * bytesPerWeight(in) / 1e9, 1) +
      " GB at " + std::to_string(in.bits) + " bits), context " +
      std::to_string(in.context) + ", batch " + std::to_string(in.batch) +
      ", prompt " + std::to_string(in.prompt) + "\n";
  out += "# cluster: " + std::to_string(c.ranks.size()) + " ranks, links " +
         (c.transport.empty() ? "-" : c.transport) + "\n";
  for (const RankFigures& r : c.ranks)
    out += "#   rank " + std::to_string(r.rank) + " " + r.host + ": " +
           fixed(r.freeBytes / 1e9, 1) + " GB free of " +
           fixed(r.memoryBytes / 1e9, 1) + " GB, weights at " +
           fixed(r.weightBytesPerSAlone / 1e9, 1) + " GB/s" +
           (r.ranksOnHost > 1 ? " alone, " + fixed(r.weightBytesPerS / 1e9, 1) +
                                    " with its host's " +
                                    std::to_string(r.ranksOnHost) + " ranks"
                              : std::string()) +
           " (" + r.rateSource + "), " + fixed(r.flopsPerS / 1e9, 0) +
           " GFLOPS\n";
  out +=
      "#  layout      fits  layers/stage  memory/rank GB  headroom GB  decode "
      "tok/s  prefill s  on links  hosts\n";
  for (const Layout& l : all) {
    char line[256];
    if (l.stageLayers.empty()) {
      std::snprintf(line, sizeof line, "   %-10s  no    %s\n", l.name.c_str(),
                    l.whyNot.c_str());
      out += line;
      continue;
    }
    std::snprintf(line, sizeof line,
                  "   %-10s  %-4s  %-12s  %14.1f  %11.1f  %12.2f  %9.2f  "
                  "%7.1f%%  %s\n",
                  l.name.c_str(), l.fits ? "yes" : "no", stageText(l).c_str(),
                  l.memoryPerRank() / 1e9, l.headroom() / 1e9,
                  l.decodeTokensPerS, l.prefillS, l.commShare() * 100,
                  joined(layoutHosts(l, c), ",").c_str());
    out += line;
    if (!l.fits) out += "               (" + l.whyNot + ")\n";
  }
  out += "best: " + planVerdict(all, m, in) + "\n";
  if (!all.empty() && all.front().fits) out += launchLines(all.front(), c);
  return out;
}

std::string planJson(const ModelShape& m, const ClusterFigures& c,
                     const PlanInputs& in, const std::vector<Layout>& all) {
  json layouts = json::array();
  json refused = json::array();
  for (const Layout& l : all) {
    if (!l.fits) {
      refused.push_back(
          {{"name", l.name}, {"tp", l.tp}, {"pp", l.pp}, {"reason", l.whyNot}});
      continue;
    }
    layouts.push_back({{"name", l.name},
                       {"tp", l.tp},
                       {"pp", l.pp},
                       {"hosts", layoutHosts(l, c)},
                       {"fits", true},
                       {"layers_per_stage", l.stageLayers},
                       {"memory_per_rank_bytes", l.memoryPerRank()},
                       {"headroom_bytes", l.headroom()},
                       {"decode_tokens_per_s", l.decodeTokensPerS},
                       {"step_s", l.stepS},
                       {"prefill_s", l.prefillS},
                       {"comm_share", l.commShare()}});
  }
  json doc{{"model", m.name},
           {"parameters", countParameters(m).total},
           {"bits", in.bits},
           {"context", in.context},
           {"batch", in.batch},
           {"prompt", in.prompt},
           {"ranks", c.ranks.size()},
           {"transport", c.transport},
           {"layouts", layouts},
           {"refused", refused},
           {"reason", planVerdict(all, m, in)}};
  return doc.dump(2) + "\n";
}

}  // namespace mcl::perf::plan
