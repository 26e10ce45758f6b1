#include "report/report_command.h"

#include <mcl/mcl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/child_run.h"
#include "common/flag_sets.h"
#include "common/help_format.h"
#include "common/mcl_error.h"
#include "common/run_metadata.h"

namespace mcl::perf {

namespace {

using nlohmann::ordered_json;
using Env = std::vector<std::pair<std::string, std::string>>;

constexpr int kKillAfterMs = 3000;
// How long the survivors may take to notice the killed rank and still
// pass: the side channel's promise (1 s), with room for a busy machine.
constexpr double kNoticeWithinSeconds = 2.0;

struct ReportOptions {
  int nranks = 0;  // -np: local ranks; 0: one rank of a job (MCL_ROOT)
  std::string outDir = ".";
  bool quick = false;  // small sizes: for tests
  int stepLimitSeconds = 900;
};

// Where this process stands in the job: a local job of nranks forked
// ranks (rank 0 runs the report), or one rank of a job across Macs.
struct JobPlace {
  bool local = true;
  int rank = 0;
  int nranks = 2;
  std::string rootHost;
  int rootPort = 0;
};

struct Step {
  std::string name;     // "doctor"
  std::string purpose;  // one line for people
  std::vector<std::string> args;
  std::string jsonFile;  // the step's -J file, "" when none
  bool drill = false;    // the failure drill
};

struct StepResult {
  Step step;
  std::vector<std::string> args;  // as run, after "mcl-perf"
  ChildRun run;
  bool passed = false;
  std::string verdict;  // one line
};

// Returns 0 to go on, -1 after --help, else the exit code.
int parse(int argc, char** argv, ReportOptions* o) {
  CLI::App app(
      wrap("Runs, one after another: the doctor (topo --check), qualify over "
           "TCP "
           "and over RDMA, latency TCP against RDMA (8 B to 1 MiB), the "
           "all-reduce sweep over TCP and over RDMA, and a job whose last rank "
           "is "
           "killed; writes mcl-report-<host>-r<rank>.md and .json into DIR and "
           "says what passed."),
      "mcl-perf report");
  app.footer(wrap(
      "On a cluster, run it on every Mac with MCL_ROOT=<Mac 0's "
      "address>:PORT\nMCL_WORLD_SIZE=<Macs> MCL_RANK=<this Mac's rank>; the "
      "steps use PORT, PORT+1, ... -np N runs N local ranks instead."));
  app.formatter(std::make_shared<WrappingFormatter>());
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  addIntFlag(
      &app, "--np", 1, 100000, [o](int n) { o->nranks = n; },
      "run N local ranks (also -np N) instead of one rank of a job across "
      "Macs");
  app.add_option("--out", o->outDir,
                 "where the files go (default the current directory)")
      ->type_name("DIR");
  app.add_flag("--quick", o->quick, "small sizes (for tests)");
  addIntFlag(
      &app, "-T,--timeout", 1, 100000,
      [o](int seconds) { o->stepLimitSeconds = seconds; },
      "the limit of each step (default 900 s)")
      ->type_name("SECONDS");
  // argv[1] is "report"; -np is --np, as for the other operations.
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 2; --i) {
    std::string arg = argv[i];
    if (arg == "-np" || arg.starts_with("-np=")) arg.insert(0, "-");
    args.push_back(std::move(arg));
  }
  try {
    app.parse(args);  // CLI11 takes them reversed
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return -1;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr,
                 "mcl-perf report: %s\nRun 'mcl-perf report --help' for "
                 "usage.\n",
                 e.what());
    return kExitUsage;
  }
  return 0;
}

bool placeFromEnvironment(const ReportOptions& o, JobPlace* place,
                          std::string* error) {
  if (o.nranks > 0) {
    place->local = true;
    place->nranks = o.nranks;
    return true;
  }
  const char* root = std::getenv("MCL_ROOT");
  const char* rank = std::getenv("MCL_RANK");
  const char* size = std::getenv("MCL_WORLD_SIZE");
  if (root == nullptr && rank == nullptr && size == nullptr) {
    place->local = true;
    place->nranks = 2;
    return true;
  }
  if (root == nullptr || rank == nullptr || size == nullptr) {
    *error =
        "on a cluster, set MCL_ROOT=<Mac 0's address>:<port>, MCL_RANK and "
        "MCL_WORLD_SIZE on every Mac (or use -np N on one machine)";
    return false;
  }
  const std::string text = root;
  const size_t colon = text.rfind(':');
  place->local = false;
  place->rank = std::atoi(rank);
  place->nranks = std::atoi(size);
  place->rootHost = text.substr(0, colon);
  place->rootPort = colon == std::string::npos
                        ? 0
                        : std::atoi(text.substr(colon + 1).c_str());
  if (place->rootPort <= 0 || place->rootPort > 65000 || place->nranks < 2 ||
      place->rank < 0 || place->rank >= place->nranks) {
    *error =
        "MCL_ROOT needs host:port (a port below 65000: the steps use "
        "it and the ones after), and MCL_RANK a rank of MCL_WORLD_SIZE "
        "(at least 2)";
    return false;
  }
  return true;
}

std::string hostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "host";
  std::string s = name;
  const size_t dot = s.find('.');
  return dot == std::string::npos ? s : s.substr(0, dot);
}

std::vector<Step> plannedSteps(const ReportOptions& o,
                               const std::string& base) {
  const std::string big = o.quick ? "1M" : "256M";
  const std::vector<std::string> sweepIters =
      o.quick ? std::vector<std::string>{"-n", "3", "-w", "1"}
              : std::vector<std::string>{};
  std::vector<Step> steps = {
      {"doctor",
       "the cabling checks, each finding with its fix",
       {"topo", "--check"},
       base + ".topo.json",
       false},
      {"qualify-tcp",
       "every cable alone over TCP: OK, SLOW or DEAD",
       {"qualify", "--transport", "tcp"},
       base + ".qualify-tcp.json",
       false},
      {"qualify-rdma",
       "every cable alone over RDMA: OK, SLOW or DEAD",
       {"qualify", "--transport", "rdma"},
       base + ".qualify-rdma.json",
       false},
      {"latency",
       o.quick ? "round trips, TCP against RDMA, 8 B to 64 KiB (--quick)"
               : "round trips, TCP against RDMA, 8 B to 1 MiB",
       {"latency", "--transport", "tcp,rdma", "-b", "8", "-e",
        o.quick ? "64K" : "1M", "-f", o.quick ? "8" : "2", "-n",
        o.quick ? "50" : "1000"},
       base + ".latency.json",
       false},
      {"allreduce-tcp",
       "the all-reduce sweep over TCP, with the verdict",
       {"allreduce", "--transport", "tcp", "-b", "8", "-e", big, "-f", "4"},
       base + ".allreduce-tcp.json",
       false},
      {"allreduce-rdma",
       "the all-reduce sweep over RDMA, with the verdict",
       {"allreduce", "--transport", "rdma", "-b", "8", "-e", big, "-f", "4"},
       base + ".allreduce-rdma.json",
       false},
      {"failure",
       "the last rank killed in a long all-reduce: how long the others take "
       "to notice",
       {"allreduce", "-b", "1M", "-e", "1M", "-n", "100000000", "-w", "0", "-c",
        "0"},
       "",
       true},
  };
  for (Step& s : steps)
    if (s.args.front() == "allreduce" && !s.drill)
      s.args.insert(s.args.end(), sweepIters.begin(), sweepIters.end());
  return steps;
}

// The last lines of `text` (at most `lines`).
std::string tail(const std::string& text, size_t lines) {
  size_t pos = text.size();
  for (size_t n = 0; pos > 0 && n <= lines; --pos)
    if (text[pos - 1] == '\n' && ++n > lines) break;
  return text.substr(pos);
}

std::string lineWith(const std::string& text, const std::string& word) {
  const size_t at = text.find(word);
  if (at == std::string::npos) return "";
  const size_t start = text.rfind('\n', at);
  const size_t end = text.find('\n', at);
  return text.substr(
      start == std::string::npos ? 0 : start + 1,
      end == std::string::npos ? std::string::npos : end - (start + 1));
}

StepResult runStep(const Step& step, size_t index, const JobPlace& place,
                   const ReportOptions& o, const std::string& self) {
  StepResult r;
  r.step = step;
  std::vector<std::string> argv = {self};
  argv.insert(argv.end(), step.args.begin(), step.args.end());
  if (place.local) {
    argv.push_back("-np");
    argv.push_back(std::to_string(place.nranks));
  }
  if (!step.jsonFile.empty()) {
    argv.push_back("-J");
    argv.push_back(o.outDir + "/" + step.jsonFile);
  }
  Env env;
  if (!place.local)
    env.emplace_back(
        "MCL_ROOT",
        place.rootHost + ":" + std::to_string(place.rootPort + int(index)));
  const int victim = place.nranks - 1;
  if (step.drill) {
    env.emplace_back("MCLPERF_KILL_RANK", std::to_string(victim));
    env.emplace_back("MCLPERF_KILL_AFTER_MS", std::to_string(kKillAfterMs));
  }
  r.args.assign(argv.begin() + 1, argv.end());
  r.run = runChild(argv, env, std::chrono::seconds(o.stepLimitSeconds));
  const ChildRun& run = r.run;
  if (!run.started) {
    r.verdict = "could not start " + self;
    return r;
  }
  if (run.timedOut) {
    r.verdict =
        "did not end within " + std::to_string(o.stepLimitSeconds) + " s (-T)";
    return r;
  }
  if (!step.drill) {
    r.passed = run.exitCode == 0;
    std::string summary;
    for (const char* word :
         {"# Cluster:", "# Qualify:", "Checks:",
          "Medians over the pairs at 8 B", "# Avg bus bandwidth"})
      if (summary.empty()) summary = lineWith(run.output, word);
    r.verdict = r.passed ? "passed"
                         : "failed (exit " + std::to_string(run.exitCode) + ")";
    if (!summary.empty()) r.verdict += ": " + summary;
    return r;
  }
  // The drill: the victim dies; every other rank must fail, and say how
  // long after the kill it noticed.
  if (!place.local && place.rank == victim) {
    r.passed = run.signal == SIGKILL || run.exitCode != 0;
    r.verdict = "this rank was the one killed";
    return r;
  }
  std::string line = lineWith(run.output, "noticed the failure");
  double worst = -1;
  for (size_t at = run.output.find("noticed the failure ");
       at != std::string::npos;
       at = run.output.find("noticed the failure ", at + 1))
    worst = std::max(worst, std::atof(run.output.c_str() + at + 20));
  if (line.empty() || worst < 0) {
    r.verdict = "no rank reported noticing the killed rank (exit " +
                std::to_string(run.exitCode) + ")";
    return r;
  }
  char text[160];
  std::snprintf(text, sizeof(text),
                "rank %d killed; noticed within %.3f s (at most %.1f s passes)",
                victim, worst, kNoticeWithinSeconds);
  r.passed = run.exitCode != 0 && worst <= kNoticeWithinSeconds;
  r.verdict = text;
  return r;
}

std::string fileText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool emulatedRun() {
  const char* p = std::getenv("MCL_RDMA_PROVIDER");
  return p != nullptr && std::string(p) == "emu";
}

std::string nowText() {
  const std::time_t t = std::time(nullptr);
  char text[64];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&t));
  return text;
}

void writeMarkdown(const std::string& path, const std::vector<StepResult>& all,
                   const JobPlace& place, bool emulated, int version) {
  std::ofstream out(path);
  int passed = 0;
  for (const StepResult& r : all) passed += r.passed ? 1 : 0;
  out << "# mcl report: " << hostName() << ", rank " << place.rank << " of "
      << place.nranks << (emulated ? " (EMULATED RDMA fabric)" : "") << "\n\n";
  if (emulated)
    out << "**RDMA ran on the EMULATED Thunderbolt fabric "
           "(MCL_RDMA_PROVIDER=emu): no figure here is real hardware's.**\n\n";
  out << "mcl " << version / 10000 << "." << (version / 100) % 100 << "."
      << version % 100 << ", " << nowText() << ", "
      << (place.local ? "local ranks (-np)" : "one rank of a job (MCL_ROOT)")
      << ".\n\n";
  out << "**" << passed << " of " << all.size() << " steps passed.**\n\n";
  out << "| step | result | seconds | what it checks |\n|---|---|---|---|\n";
  for (const StepResult& r : all)
    out << "| " << r.step.name << " | " << (r.passed ? "PASS" : "FAIL") << " | "
        << static_cast<int>(r.run.seconds + 0.5) << " | " << r.step.purpose
        << " |\n";
  for (const StepResult& r : all) {
    out << "\n## " << r.step.name << ": " << (r.passed ? "PASS" : "FAIL")
        << "\n\n"
        << r.verdict << "\n\n```\n$ mcl-perf";
    for (const std::string& a : r.args) out << " " << a;
    out << "\n" << tail(r.run.output, 120) << "```\n";
  }
}

void writeJson(const std::string& path, const std::vector<StepResult>& all,
               const JobPlace& place, bool emulated, int version,
               const ReportOptions& o) {
  ordered_json report = ordered_json::object();
  report["mcl_report"] = 1;
  report["emulated"] = emulated;
  report["host"] = hostName();
  report["rank"] = place.rank;
  report["nranks"] = place.nranks;
  report["mcl_version"] = version;
  report["when"] = nowText();
  bool allPassed = true;
  for (const StepResult& r : all) allPassed &= r.passed;
  report["passed"] = allPassed;
  ordered_json steps = ordered_json::array();
  for (const StepResult& r : all) {
    std::vector<std::string> command = {"mcl-perf"};
    command.insert(command.end(), r.args.begin(), r.args.end());
    ordered_json step = {{"name", r.step.name},
                         {"passed", r.passed},
                         {"verdict", r.verdict},
                         {"seconds", r.run.seconds},
                         {"exit_code", r.run.exitCode},
                         {"command", command},
                         {"output_tail", tail(r.run.output, 200)}};
    if (!r.step.jsonFile.empty()) {
      // The step's own JSON, when it wrote one (rank 0 writes them); null
      // when it wrote none, or not all of it (a step cut short), so that
      // this file still parses.
      ordered_json result = ordered_json::parse(
          fileText(o.outDir + "/" + r.step.jsonFile), nullptr, false);
      step["result"] =
          result.is_discarded() ? ordered_json() : std::move(result);
    }
    steps.push_back(std::move(step));
  }
  report["steps"] = std::move(steps);
  std::ofstream(path) << reportText(report);
}

}  // namespace

int runReport(int argc, char** argv) {
  ReportOptions o;
  if (int code = parse(argc, argv, &o); code != 0)
    return code < 0 ? kExitOk : code;
  // Only the flags (scripts/check-docs.py), as for the other operations.
  if (const char* only = std::getenv("MCLPERF_PARSE_ONLY");
      only != nullptr && *only == '1')
    return kExitOk;
  JobPlace place;
  std::string error;
  if (!placeFromEnvironment(o, &place, &error)) {
    std::fprintf(stderr, "mcl-perf report: %s\n", error.c_str());
    return kExitUsage;
  }
  if (mkdir(o.outDir.c_str(), 0755) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "mcl-perf report: cannot make %s: %s\n",
                 o.outDir.c_str(), std::strerror(errno));
    return kExitFailure;
  }
  int version = 0;
  mclGetVersion(&version);
  const bool emulated = emulatedRun();
  const std::string base =
      "mcl-report-" + hostName() + "-r" + std::to_string(place.rank);
  const std::string self = selfExecutable();
  std::vector<StepResult> results;
  const std::vector<Step> steps = plannedSteps(o, base);
  for (size_t i = 0; i < steps.size(); ++i) {
    std::printf("# report step %zu of %zu: %s (%s)%s\n", i + 1, steps.size(),
                steps[i].name.c_str(), steps[i].purpose.c_str(),
                emulated ? " [EMULATED RDMA]" : "");
    results.push_back(runStep(steps[i], i, place, o, self));
    std::printf("#   %s: %s\n", results.back().passed ? "PASS" : "FAIL",
                results.back().verdict.c_str());
  }
  const std::string md = o.outDir + "/" + base + ".md";
  const std::string json = o.outDir + "/" + base + ".json";
  writeMarkdown(md, results, place, emulated, version);
  writeJson(json, results, place, emulated, version, o);
  int passed = 0;
  for (const StepResult& r : results) passed += r.passed ? 1 : 0;
  std::printf("# report: %d of %zu steps passed%s; attach %s and %s\n", passed,
              results.size(), emulated ? " (EMULATED RDMA fabric)" : "",
              md.c_str(), json.c_str());
  return passed == int(results.size()) ? kExitOk : kExitFailure;
}

}  // namespace mcl::perf
