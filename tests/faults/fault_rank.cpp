// One rank of a fault-injection job (tests/faults/test_faults.py starts
// them as real processes, on one host or in network namespaces). It joins
// through mclCommInitFromEnv, runs checked all-reduces until one fails (or
// plays the victim of the plan), then reports as one JSON line on stdout:
// the error and when it came, the asynchronous error, the descriptors held
// before init, after the abort and after a second communicator built with
// the survivors.
//
// Environment, besides the MCL_* of the job:
//   FAULT_PLAN      kill_before | kill_during | kill_after | stop | cable |
//                   root_init | abort_thread; serve: no fault (a few calls
//                   once past FAULT_GATE, then destroy); compute: no fault,
//                   the victim computes FAULT_COMPUTE_S seconds between two
//                   calls while the others wait in the second
//   FAULT_VICTIM    the rank the fault hits (the driver signals it for stop)
//   FAULT_SURVIVORS comma-separated ranks that build the second communicator
//   FAULT_REJOIN    host:port where the first survivor runs its rendezvous
//   FAULT_CALLS     all-reduces before the victim's exit in kill_after
//   FAULT_GATE      a file to wait for (30 s at most) before rebuilding
//                   (the driver creates it once the cable is back) or
//                   serving
#include <dirent.h>
#include <mcl/mcl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr size_t kCount = 1 << 20;  // 4 MiB of floats: calls last a while

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string env(const char* name, const char* fallback = "") {
  const char* v = getenv(name);
  return v != nullptr ? v : fallback;
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char hex[8];
      snprintf(hex, sizeof(hex), "\\u%04x", c);
      out += hex;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// A progress line the driver waits for before it injects a fault.
void say(const char* what) {
  printf("%s %.6f\n", what, now());
  fflush(stdout);
}

size_t openDescriptors() {
#if defined(__linux__)
  const char* dir = "/proc/self/fd";
#else
  const char* dir = "/dev/fd";
#endif
  size_t n = 0;
  if (DIR* d = opendir(dir)) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n;
}

// Threads of this process (Linux; elsewhere 0, not compared).
size_t threadCount() {
  size_t n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n;
}

// Waits (up to 10 s) until this process holds fds descriptors and threads
// threads again. Rank 0's rendezvous root runs on a thread of its own that
// closes its listeners and ends moments after the last rank has left it,
// on its own schedule: on a busy machine a count taken right after an
// abort can still see it. A leak stays, and is counted after the wait.
void settleCensus(size_t fds, size_t threads) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((openDescriptors() != fds || threadCount() != threads) &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

// mcl's shared-memory segments still mapped (Linux: /proc/self/maps;
// elsewhere not counted).
int mappedSegments() {
  int n = 0;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find("/dev/shm/mcl-") != std::string::npos) ++n;
  return n;
}

struct Report {
  std::ostringstream json;
  bool first = true;
  void add(const char* key, const std::string& rawJson) {
    json << (first ? "{" : ", ") << quoted(key) << ": " << rawJson;
    first = false;
  }
  void text(const char* key, const std::string& value) {
    add(key, quoted(value));
  }
  void number(const char* key, double value) {
    std::ostringstream s;
    s.precision(17);
    s << value;
    add(key, s.str());
  }
  void print() {
    printf("RESULT %s}\n", json.str().c_str());
    fflush(stdout);
  }
};

// Sums rank+1 over the communicator and checks every element.
mclResult_t checkedAllReduce(mclComm_t comm, int rank, int nranks,
                             std::vector<float>& in, std::vector<float>& out,
                             std::string& wrong) {
  std::fill(in.begin(), in.end(), static_cast<float>(rank + 1));
  mclResult_t r = mclAllReduce(in.data(), out.data(), in.size(), mclFloat32,
                               mclSum, comm, nullptr);
  const float want = static_cast<float>(nranks * (nranks + 1) / 2);
  if (r == mclSuccess)
    for (size_t i = 0; i < out.size(); i += 4099)
      if (out[i] != want) {
        wrong = "element " + std::to_string(i) + " is " +
                std::to_string(out[i]) + ", expected " + std::to_string(want);
        break;
      }
  return r;
}

// The victim's part: die (or be stopped by the driver) at its moment.
void playVictim(const std::string& plan, mclComm_t comm, int rank, int nranks) {
  std::vector<float> in(kCount), out(kCount);
  std::string wrong;
  if (plan == "kill_before") raise(SIGKILL);
  if (plan == "kill_after") {
    const int calls = atoi(env("FAULT_CALLS", "3").c_str());
    for (int i = 0; i < calls; ++i)
      checkedAllReduce(comm, rank, nranks, in, out, wrong);
    raise(SIGKILL);
  }
  if (plan == "kill_during") {
    // Dies 300 ms into a stream of calls: almost surely inside one.
    std::thread([] {
      usleep(300 * 1000);
      raise(SIGKILL);
    }).detach();
  }
  // stop, abort_thread: runs until the driver stops it (and later kills it).
  say("LOOPING");
  while (checkedAllReduce(comm, rank, nranks, in, out, wrong) == mclSuccess) {
  }
  pause();
}

// Waits up to 30 s for the file FAULT_GATE names (true at once without).
bool passGate() {
  const std::string gate = env("FAULT_GATE");
  for (int i = 0; !gate.empty() && access(gate.c_str(), F_OK) != 0; ++i) {
    if (i == 3000) return false;
    usleep(10 * 1000);
  }
  return true;
}

// plan "serve" (the security tests): no fault; once past the gate, a few
// checked all-reduces and an orderly destroy.
void serve(mclComm_t comm, int rank, int nranks, Report& report) {
  if (!passGate()) report.text("error", "no " + env("FAULT_GATE"));
  std::vector<float> in(kCount), out(kCount);
  std::string wrong;
  const int calls = atoi(env("FAULT_CALLS", "3").c_str());
  for (int i = 0; i < calls && wrong.empty(); ++i)
    if (checkedAllReduce(comm, rank, nranks, in, out, wrong) != mclSuccess) {
      report.text("error", mclGetLastError(comm));
      break;
    }
  if (!wrong.empty()) report.text("wrong_result", wrong);
  if (mclCommDestroy(comm) != mclSuccess)
    report.text("error", mclGetLastError(nullptr));
}

// plan "compute": two checked all-reduces; between them the victim keeps
// its CPU busy for FAULT_COMPUTE_S seconds, the way a rank runs its share
// of a model, while the others already wait in the second call. Nobody may
// count it as dead: its side channel keeps beating.
void computeBetweenCalls(mclComm_t comm, int rank, int nranks, bool victim,
                         Report& report) {
  std::vector<float> in(kCount), out(kCount);
  std::string wrong;
  const double seconds = atof(env("FAULT_COMPUTE_S", "30").c_str());
  mclResult_t r = checkedAllReduce(comm, rank, nranks, in, out, wrong);
  if (r == mclSuccess && victim) {
    volatile double sink = 0;
    for (const double end = now() + seconds; now() < end;)
      for (int i = 0; i < 100000; ++i) sink = sink + i * 0.5;
  }
  if (r == mclSuccess) r = checkedAllReduce(comm, rank, nranks, in, out, wrong);
  report.number("error_at", now());
  report.text("error_code", mclGetErrorString(r));
  if (r != mclSuccess) report.text("error", mclGetLastError(comm));
  if (!wrong.empty()) report.text("wrong_result", wrong);
  if (mclCommDestroy(comm) != mclSuccess)
    report.text("error", mclGetLastError(nullptr));
}

// The survivors' second communicator: the first survivor runs the
// rendezvous at FAULT_REJOIN, ranks are the order in FAULT_SURVIVORS.
void rebuild(int oldRank, Report& report, size_t fdsBefore,
             size_t threadsBefore) {
  if (!passGate()) {
    report.text("rebuild_error", "no " + env("FAULT_GATE") + " after 30 s");
    return;
  }
  std::vector<int> survivors;
  std::stringstream list(env("FAULT_SURVIVORS"));
  for (std::string item; std::getline(list, item, ',');)
    survivors.push_back(atoi(item.c_str()));
  int newRank = -1;
  for (size_t i = 0; i < survivors.size(); ++i)
    if (survivors[i] == oldRank) newRank = static_cast<int>(i);
  const int n = static_cast<int>(survivors.size());
  setenv("MCL_RANK", std::to_string(newRank).c_str(), 1);
  setenv("MCL_WORLD_SIZE", std::to_string(n).c_str(), 1);
  setenv("MCL_ROOT", env("FAULT_REJOIN").c_str(), 1);
  unsetenv("MCL_EMU_FAULTS");  // the cable is back for the new job
  // A survivor may reach this only after its first init timed out (the
  // root died during it) while the others wait here already.
  setenv("MCL_TIMEOUT", "30", 1);
  mclComm_t comm = nullptr;
  mclResult_t r = mclCommInitFromEnv(&comm, nullptr);
  if (r != mclSuccess) {
    report.text("rebuild_error", mclGetLastError(nullptr));
    return;
  }
  std::vector<float> in(kCount), out(kCount);
  std::string wrong;
  for (int i = 0; i < 3 && r == mclSuccess && wrong.empty(); ++i)
    r = checkedAllReduce(comm, newRank, n, in, out, wrong);
  if (r != mclSuccess)
    report.text("rebuild_error", mclGetLastError(comm));
  else if (!wrong.empty())
    report.text("rebuild_error", "wrong result: " + wrong);
  r = mclCommDestroy(comm);
  if (r != mclSuccess && wrong.empty())
    report.text("rebuild_error",
                std::string("destroy: ") + mclGetLastError(nullptr));
  settleCensus(fdsBefore, threadsBefore);
  report.number("fds_after_rebuild", static_cast<double>(openDescriptors()));
}

}  // namespace

int main() {
  const std::string plan = env("FAULT_PLAN");
  const int rank = atoi(env("MCL_RANK", "-1").c_str());
  const int victim = atoi(env("FAULT_VICTIM", "-1").c_str());
  Report report;
  report.number("rank", rank);
  // Logging opens nothing per communicator, but its first message may
  // open the log file: count after a first call that could log.
  mclGetLastError(nullptr);
  const size_t fdsBefore = openDescriptors();
  report.number("fds_before", static_cast<double>(fdsBefore));
  const size_t threadsBefore = threadCount();
  report.number("threads_before", static_cast<double>(threadsBefore));

  say("INIT");
  mclComm_t comm = nullptr;
  mclResult_t r = mclCommInitFromEnv(&comm, nullptr);
  if (r != mclSuccess) {
    report.number("error_at", now());
    report.text("error_code", mclGetErrorString(r));
    report.text("error", mclGetLastError(nullptr));
    report.text("failed_in", "init");
  } else {
    int nranks = 0;
    mclCommCount(comm, &nranks);
    say("READY");
    if (plan == "serve") {
      serve(comm, rank, nranks, report);
      report.print();
      return 0;
    }
    if (plan == "compute") {
      computeBetweenCalls(comm, rank, nranks, rank == victim, report);
      report.print();
      return 0;
    }
    if (rank == victim) playVictim(plan, comm, rank, nranks);

    std::atomic<double> abortedAt{0};
    std::thread aborter;
    if (plan == "abort_thread") {
      // The victim is stopped and MCL_TIMEOUT is long: only the abort from
      // this thread can end the waiting call.
      aborter = std::thread([&] {
        usleep(1500 * 1000);
        abortedAt = now();
        if (mclCommAbort(comm) != mclSuccess)
          report.text("abort_error", mclGetLastError(nullptr));
      });
    }
    std::vector<float> in(kCount), out(kCount);
    std::string wrong;
    int calls = 0;
    say("LOOPING");
    // A bound on the loop, so a fault nobody notices ends the test too.
    const double giveUp = now() + 120;
    while (wrong.empty() && now() < giveUp) {
      r = checkedAllReduce(comm, rank, nranks, in, out, wrong);
      if (r != mclSuccess) break;
      ++calls;
    }
    report.number("error_at", now());
    report.number("calls_done", calls);
    if (!wrong.empty()) report.text("wrong_result", wrong);
    report.text("error_code", mclGetErrorString(r));
    // This thread's last error: the handle may be gone (abort_thread).
    report.text("error", mclGetLastError(nullptr));
    report.text("failed_in", "all-reduce");
    if (plan == "abort_thread") {
      // Resources are released when mclCommAbort returns.
      aborter.join();
      report.number("aborted_at", abortedAt.load());
    } else {
      mclResult_t async = mclSuccess;
      mclResult_t q = mclCommGetAsyncError(comm, &async);
      report.text("async_error",
                  q == mclSuccess ? mclGetErrorString(async) : "query failed");
      r = mclCommAbort(comm);
      if (r != mclSuccess) report.text("abort_error", mclGetLastError(nullptr));
    }
  }
  settleCensus(fdsBefore, threadsBefore);
  report.number("fds_after_abort", static_cast<double>(openDescriptors()));
  report.number("threads_after_abort", static_cast<double>(threadCount()));
  report.number("mapped_segments", mappedSegments());
  if (!env("FAULT_SURVIVORS").empty())
    rebuild(rank, report, fdsBefore, threadsBefore);
  report.print();
  return 0;
}
