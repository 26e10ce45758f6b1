#include "common/kill_drill.h"

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace mcl::perf {

namespace {

using Clock = std::chrono::steady_clock;

bool armed = false;
int victim = -1;
Clock::time_point killedAt;

}  // namespace

void armKillDrill(int rank) {
  const char* who = std::getenv("MCLPERF_KILL_RANK");
  const char* after = std::getenv("MCLPERF_KILL_AFTER_MS");
  if (who == nullptr || after == nullptr) return;
  victim = std::atoi(who);
  const auto delay = std::chrono::milliseconds(std::atoll(after));
  killedAt = Clock::now() + delay;
  armed = true;
  if (rank != victim) return;
  std::thread([delay, rank] {
    std::this_thread::sleep_for(delay);
    std::fprintf(stderr, "mcl-perf: rank %d: killing itself (the drill)\n",
                 rank);
    std::fflush(stderr);
    raise(SIGKILL);
  }).detach();
}

void reportKillDrill(int rank) {
  if (!armed || rank == victim) return;
  const double seconds =
      std::chrono::duration<double>(Clock::now() - killedAt).count();
  std::fprintf(stderr,
               "mcl-perf: rank %d: noticed the failure %.3f s after rank %d "
               "was killed\n",
               rank, seconds, victim);
}

}  // namespace mcl::perf
