#include "base/log.h"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "platform/host_identity.h"

namespace mcl {

namespace {

LogLevel parseLevel(const char* s) {
  if (s == nullptr || *s == '\0') return LogLevel::Warn;
  std::string v(s);
  for (auto& c : v)
    c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
  if (v == "NONE" || v == "OFF" || v == "VERSION") return LogLevel::None;
  if (v == "WARN") return LogLevel::Warn;
  if (v == "INFO") return LogLevel::Info;
  if (v == "TRACE") return LogLevel::Trace;
  fprintf(stderr,
          "MCL WARN MCL_DEBUG='%s' is not NONE, WARN, INFO or TRACE; "
          "using WARN\n",
          s);
  return LogLevel::Warn;
}

uint32_t subsysBit(const std::string& name) {
  static const struct {
    const char* name;
    uint32_t bit;
  } kNames[] = {{"INIT", kLogInit}, {"BOOTSTRAP", kLogBootstrap},
                {"SHM", kLogShm},   {"COLL", kLogColl},
                {"P2P", kLogP2p},   {"ENV", kLogEnv},
                {"TOPO", kLogTopo}, {"ALL", kLogAll}};
  for (const auto& n : kNames)
    if (strcasecmp(n.name, name.c_str()) == 0) return n.bit;
  fprintf(stderr, "MCL WARN MCL_DEBUG_SUBSYS: unknown subsystem '%s'\n",
          name.c_str());
  return 0;
}

uint32_t parseSubsystems(const char* s) {
  if (s == nullptr || *s == '\0') return kLogAll;
  bool exclude = s[0] == '^';
  if (exclude) ++s;
  uint32_t mask = 0;
  std::string list(s);
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    if (comma > start) mask |= subsysBit(list.substr(start, comma - start));
    start = comma + 1;
  }
  return exclude ? ~mask : mask;
}

std::string expandFileName(const char* pattern) {
  std::string out;
  for (const char* p = pattern; *p; ++p) {
    if (p[0] == '%' && p[1] == 'h') {
      out += platform::hostName();
      ++p;
    } else if (p[0] == '%' && p[1] == 'p') {
      out += std::to_string(getpid());
      ++p;
    } else {
      out += *p;
    }
  }
  return out;
}

// The log's destination in this process: MCL_DEBUG_FILE's file, or stderr.
struct LogSink {
  std::mutex mutex;
  FILE* file = nullptr;
  pid_t owner = 0;
  std::string name;  // the file's, "" for stderr
};

LogSink& sink() {
  static LogSink* s = new LogSink;  // lives past static destructors
  return *s;
}

FILE* openLogFile(std::string* name) {
  name->clear();
  const char* pattern = getenv("MCL_DEBUG_FILE");
  if (pattern == nullptr || *pattern == '\0') return stderr;
  const std::string path = expandFileName(pattern);
  FILE* f = fopen(path.c_str(), "a");
  if (f == nullptr) {
    fprintf(stderr, "MCL WARN cannot open MCL_DEBUG_FILE '%s': %s\n",
            path.c_str(), strerror(errno));
    return stderr;
  }
  setvbuf(f, nullptr, _IOLBF, 0);
  *name = path;
  return f;
}

// Writes one line (one fprintf, so lines from threads do not interleave).
// A log file that stops taking lines (a full disk) is given up for stderr
// with one WARN saying why: the lines go on, and the job with them.
void writeLine(const char* line) {
  LogSink& s = sink();
  std::lock_guard<std::mutex> lock(s.mutex);
  const pid_t pid = getpid();
  // Per process: a child forked after the parent logged opens its own file
  // (%p differs), instead of writing into the parent's.
  if (s.file == nullptr || s.owner != pid) {
    if (s.file != nullptr && s.file != stderr && s.owner == pid) fclose(s.file);
    s.file = openLogFile(&s.name);
    s.owner = pid;
  }
  if (fputs(line, s.file) >= 0 && fflush(s.file) == 0 && !ferror(s.file))
    return;
  if (s.file == stderr) return;  // nowhere else to go
  const int err = errno;
  fclose(s.file);
  s.file = stderr;
  fprintf(stderr,
          "MCL WARN cannot write MCL_DEBUG_FILE '%s': %s; logging goes on "
          "to stderr (free the disk, or point MCL_DEBUG_FILE elsewhere)\n",
          s.name.c_str(), strerror(err));
  fputs(line, stderr);
}

const char* levelName(LogLevel level) {
  switch (level) {
    case LogLevel::Warn:
      return "WARN";
    case LogLevel::Info:
      return "INFO";
    case LogLevel::Trace:
      return "TRACE";
    default:
      return "";
  }
}

}  // namespace

const LogConfig& logConfig() {
  static const LogConfig config = [] {
    LogConfig c;
    c.level = parseLevel(getenv("MCL_DEBUG"));
    c.subsystems = parseSubsystems(getenv("MCL_DEBUG_SUBSYS"));
    return c;
  }();
  return config;
}

void logMessage(LogLevel level, uint32_t subsys, const char* fmt, ...) {
  (void)subsys;
  static const std::string host = platform::hostName();
  char text[2048];
  va_list args;
  va_start(args, fmt);
  vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  char line[2400];
  snprintf(line, sizeof(line), "%s:%d:%zu MCL %s %s\n", host.c_str(),
           static_cast<int>(getpid()),
           std::hash<std::thread::id>{}(std::this_thread::get_id()) % 100000,
           levelName(level), text);
  writeLine(line);
}

}  // namespace mcl
