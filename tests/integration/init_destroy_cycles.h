// Many init/destroy cycles of a two-rank communicator over one transport,
// all in the same two processes, each of which must leave nothing behind:
// descriptors and threads (a rank's census after its first cycle against
// after its last), mcl's mapped segments, /dev/shm segments and, in
// sanitized builds, memory (the harness runs LeakSanitizer in each rank).
// Rank 0 makes each cycle's unique id, as an application's rank 0 does, so
// the rendezvous root it starts is counted too. Linux only: it reads /proc
// and /dev/shm.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace mcl::test {

struct InitDestroyCycles {
  int cycles = 1000;
  // Runs in each rank before its first init: the transport's environment.
  std::function<void()> setup;
  int allReduceEvery = 1;           // a checked all-reduce every so many cycles
  bool mapsSegments = false;        // mcl segments are mapped while it lives
  std::string shmPrefix = "mcl-";   // /dev/shm names a leak would leave
  int timeoutSeconds = 10;          // the communicators' timeout
  std::chrono::seconds bound{300};  // the whole run
};

// Adds a test failure for anything a cycle left behind.
void expectInitDestroyCyclesLeakNothing(const InitDestroyCycles& run);

}  // namespace mcl::test
