// Logging: MCL_DEBUG=WARN|INFO|TRACE picks the level, MCL_DEBUG_SUBSYS
// (INIT,BOOTSTRAP,SHM,COLL,P2P,ENV,TOPO or ALL, ^ to exclude) the subsystems,
// MCL_DEBUG_FILE (%h host, %p pid) the destination. Messages name the rank,
// the peer and the link; the secret never appears in them.
#pragma once

#include <cstdint>

namespace mcl {

enum class LogLevel { None = 0, Warn = 1, Info = 2, Trace = 3 };

enum LogSubsys : uint32_t {
  kLogInit = 1u << 0,
  kLogBootstrap = 1u << 1,
  kLogShm = 1u << 2,
  kLogColl = 1u << 3,
  kLogP2p = 1u << 4,
  kLogEnv = 1u << 5,
  kLogTopo = 1u << 6,
  kLogAll = ~0u,
};

struct LogConfig {
  LogLevel level = LogLevel::Warn;
  uint32_t subsystems = kLogAll;
};

// Read from the environment once per process.
const LogConfig& logConfig();

// MCL_DEBUG_SUBSYS chooses among INFO and TRACE messages; a warning shows
// whatever it says (as NCCL's do), so narrowing the log to one subsystem
// never hides a problem.
inline bool logEnabled(LogLevel level, uint32_t subsys) {
  const LogConfig& c = logConfig();
  return level <= c.level &&
         (level == LogLevel::Warn || (subsys & c.subsystems) != 0);
}

void logMessage(LogLevel level, uint32_t subsys, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

}  // namespace mcl

// A macro only so that the arguments are not evaluated when the level is off.
#define MCL_LOG(level, subsys, ...)                                     \
  do {                                                                  \
    if (::mcl::logEnabled(::mcl::LogLevel::level, (subsys)))            \
      ::mcl::logMessage(::mcl::LogLevel::level, (subsys), __VA_ARGS__); \
  } while (0)
