#include "common/command_line.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstddef>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/bench_flags.h"
#include "bench/collective_bench.h"
#include "common/help_format.h"
#include "common/options.h"
#include "common/run_metadata.h"
#include "latency/latency_flags.h"
#include "params/params_flags.h"
#include "plan/plan_flags.h"
#include "pp/pp_flags.h"
#include "qualify/qualify_flags.h"
#include "topo/topo_flags.h"
#include "tp/tp_flags.h"
#include "tune/tune_flags.h"

namespace mcl::perf {

namespace {

// nccl-tests' programs and the benchmark each one is: mcl-perf installed
// (or linked) under one of these names runs it.
struct NcclTestsProgram {
  const char* program;
  Collective collective;
};

constexpr NcclTestsProgram kNcclTestsPrograms[] = {
    {"all_reduce_perf", Collective::AllReduce},
    {"all_gather_perf", Collective::AllGather},
    {"broadcast_perf", Collective::Broadcast},
    {"reduce_perf", Collective::Reduce},
    {"reduce_scatter_perf", Collective::ReduceScatter},
    {"alltoall_perf", Collective::AllToAll},
    {"sendrecv_perf", Collective::SendRecv},
};

const char* kFooter =
    "SIZE takes a K, M or G suffix (powers of 1024).\n"
    "Without -np: under a launcher (mpirun, srun, torchrun, mlx.launch, or "
    "MCL_UNIQUE_ID, MCL_RANK and MCL_WORLD_SIZE), mcl-perf runs as that one "
    "rank of the job; otherwise it forks 2 local ranks.\n"
    "Installed as all_reduce_perf, all_gather_perf, broadcast_perf, "
    "reduce_perf, reduce_scatter_perf, alltoall_perf or sendrecv_perf, it "
    "runs that benchmark, as nccl-tests does.\n"
    "Exit status: 0 success, 1 failure or wrong results, 2 bad usage.";

std::string baseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path
                                                     : path.substr(slash + 1));
}

// What each subcommand runs.
struct Operation {
  Command command;
  Collective collective = Collective::AllReduce;  // a benchmark's
};

const char* ncclTestsName(Collective c) {
  for (const NcclTestsProgram& p : kNcclTestsPrograms)
    if (p.collective == c) return p.program;
  return "";
}

class CommandLine {
 public:
  explicit CommandLine(Options* o) : o_(o) {
    app_.name("mcl-perf");
    app_.description(wrap(
        "Benchmarks mcl's collectives the way nccl-tests benchmarks NCCL's, "
        "with the same table and flags, and qualifies cables and Macs."));
    app_.formatter(std::make_shared<WrappingFormatter>());
    app_.footer(wrap(kFooter, kHelpWidth));
    app_.set_version_flag("--version", [] { return versionLine(); });
    app_.require_subcommand(0, 1);
    app_.allow_extras();
    // nccl-tests' getopt takes a flag's last value.
    app_.option_defaults()->multi_option_policy(
        CLI::MultiOptionPolicy::TakeLast);
    for (Collective c : benchmarkedCollectives()) {
      CLI::App* sub = add(collectiveName(c), {Command::Benchmark, c});
      sub->description(std::string("nccl-tests' ") + ncclTestsName(c) +
                       " table for mcl's " + collectiveName(c));
      sub->group("Benchmarks");
      addBenchmarkFlags(sub, o_);
    }
    // Each command's flags file sets its long description as its help's
    // footer; the list of operations shows the summaries given here.
    CLI::App* tp = add("tp", {Command::Tp},
                       "tensor-parallel decoding: a token's all-reduces");
    tp->group("Benchmarks");
    addTpFlags(tp, o_);
    CLI::App* pp =
        add("pp", {Command::Pp}, "pipeline-parallel decoding: a token's trip");
    pp->group("Benchmarks");
    addPpFlags(pp, o_);
    CLI::App* plan =
        add("plan", {Command::Plan},
            "the layouts a model can run in here, and their tokens/s");
    plan->group("Benchmarks");
    addPlanFlags(plan, o_);
    addLatencyFlags(add("latency", {Command::Latency},
                        "round trips per pair of ranks and transport"),
                    o_);
    addQualifyFlags(
        add("qualify", {Command::Qualify}, "tests every cable and Mac"), o_);
    addTopoFlags(add("topo", {Command::Topo},
                     "the cluster, its cables and the checks of the cabling"),
                 o_);
    addTuneFlags(add("tune", {Command::Tune},
                     "the tuner's predictions for every algorithm and size"),
                 o_);
    addParamsFlags(
        add("params", {Command::Params}, "every MCL_* variable and its value"),
        o_);
    // Parsed by report_command.cpp (main.cpp sends it there); listed here
    // for the help.
    CLI::App* report = app_.add_subcommand(
        "report", "the kit for a bug report (mcl-perf report --help)");
    report->group("Tools");
    report->allow_extras();
    for (const auto& [sub, op] : operations_) {
      CLI::App* command = const_cast<CLI::App*>(sub);
      const std::string own = command->get_footer();
      command->footer((own.empty() ? "" : wrap(own, kHelpWidth) + "\n\n") +
                      wrap(kFooter, kHelpWidth));
    }
  }

  ParseStatus parse(int argc, char** argv, std::string* error,
                    std::string* usageHint) {
    std::vector<std::string> args = normalise(argc, argv);
    std::reverse(args.begin(), args.end());  // CLI11 takes them reversed
    try {
      app_.parse(args);
    } catch (const CLI::CallForHelp&) {
      std::cout << app_.help();
      return ParseStatus::Done;
    } catch (const CLI::CallForAllHelp&) {
      std::cout << app_.help("", CLI::AppFormatMode::All);
      return ParseStatus::Done;
    } catch (const CLI::CallForVersion&) {
      std::cout << versionLine() << "\n";
      return ParseStatus::Done;
    } catch (const CLI::ParseError& e) {
      *error = e.what();
      *usageHint = hintFor(parsedCommand());
      return ParseStatus::Error;
    }
    CLI::App* sub = parsedCommand();
    *usageHint = hintFor(sub);
    if (sub == nullptr) {
      const std::vector<std::string> extra = app_.remaining();
      *error = extra.empty() || extra.front().starts_with("-")
                   ? "missing the operation: one of " + operationList()
                   : "unknown operation '" + extra.front() +
                         "': expected one of " + operationList();
      return ParseStatus::Error;
    }
    const std::vector<std::string> extra = sub->remaining();
    if (!extra.empty()) {
      *error = misplaced(extra.front(), sub);
      return ParseStatus::Error;
    }
    const Operation& op = operations_.at(sub);
    o_->command = op.command;
    if (op.command == Command::Benchmark) o_->collective = op.collective;
    return ParseStatus::Ok;
  }

 private:
  CLI::App* add(const std::string& name, Operation op,
                const std::string& summary = "") {
    CLI::App* sub = app_.add_subcommand(name, summary);
    sub->group("Tools");
    sub->footer("");
    sub->allow_extras();
    operations_[sub] = op;
    return sub;
  }

  static std::string versionLine() {
    int library = 0;
    mclGetVersion(&library);
    return "mcl-perf " + versionText(MCL_VERSION_CODE) + " (mcl library " +
           versionText(library) + ")";
  }

  // The program's name as a benchmark (all_reduce_perf: allreduce), -np
  // as --np (CLI11's short flags are one letter), and the operation first
  // wherever it was typed (nccl-tests-style flags often come first).
  std::vector<std::string> normalise(int argc, char** argv) const {
    std::vector<std::string> args;
    const std::string program = argc > 0 ? baseName(argv[0]) : "";
    for (const NcclTestsProgram& p : kNcclTestsPrograms)
      if (program == p.program) args.emplace_back(collectiveName(p.collective));
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg == "-np" || arg.starts_with("-np=")) arg.insert(0, "-");
      args.push_back(std::move(arg));
    }
    auto named = std::find_if(args.begin(), args.end(),
                              [&](const auto& a) { return isOperation(a); });
    if (named != args.end()) std::rotate(args.begin(), named, named + 1);
    return args;
  }

  bool isOperation(const std::string& name) const {
    for (const auto& [sub, op] : operations_)
      if (sub->check_name(name)) return true;
    return name == "report";
  }

  CLI::App* parsedCommand() {
    const std::vector<CLI::App*> parsed = app_.get_subcommands();
    return parsed.empty() ? nullptr : parsed.front();
  }

  static std::string hintFor(const CLI::App* sub) {
    return sub == nullptr
               ? "Run 'mcl-perf --help' for usage."
               : "Run 'mcl-perf " + sub->get_name() + " --help' for usage.";
  }

  std::string operationList() const {
    std::string list = collectiveNameList();
    list += ", tp, pp, plan, latency, qualify, topo, tune, params, report";
    return list;
  }

  // A flag the operation does not take: which operations take it.
  std::string misplaced(const std::string& token, const CLI::App* sub) const {
    if (!token.starts_with("-"))
      return "unexpected argument '" + token + "' for " + sub->get_name();
    std::string flag = token.substr(0, token.find('='));
    if (!flag.starts_with("--") && flag.size() > 2) flag.resize(2);  // -b8
    std::vector<std::string> takers;
    bool onlyBenchmarks = true;
    for (const auto& [other, op] : operations_) {
      if (const_cast<CLI::App*>(other)->get_option_no_throw(flag) == nullptr)
        continue;
      takers.push_back(other->get_name());
      onlyBenchmarks &= op.command == Command::Benchmark;
    }
    if (takers.empty()) return "unknown flag '" + token + "'";
    std::sort(takers.begin(), takers.end());
    std::string list;
    for (const std::string& t : takers) list += (list.empty() ? "" : ", ") + t;
    return flag + " goes with " +
           (onlyBenchmarks ? "a benchmark (" + list + ")" : list) +
           ", not with " + sub->get_name();
  }

  Options* o_;
  CLI::App app_;
  std::map<const CLI::App*, Operation> operations_;
};

}  // namespace

ParseStatus parseCommandLine(int argc, char** argv, Options* options,
                             std::string* error, std::string* usageHint) {
  options->commandLine.assign(argv, argv + argc);
  CommandLine commandLine(options);
  return commandLine.parse(argc, argv, error, usageHint);
}

}  // namespace mcl::perf
