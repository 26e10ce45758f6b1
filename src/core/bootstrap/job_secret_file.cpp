#include "core/bootstrap/job_secret_file.h"

#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <system_error>
#include <thread>

#include "base/error.h"
#include "base/log.h"

namespace mcl {

namespace {

using platform::Clock;

// A directory this user owns and nobody else may enter or write.
bool isPrivateDirectory(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
         st.st_uid == geteuid() && (st.st_mode & 077) == 0;
}

// XDG_RUNTIME_DIR (systemd's per-user directory), else TMPDIR where it is
// this user's own (macOS gives each user one), else /tmp/mcl-<uid>, made
// here with mode 0700. An existing /tmp/mcl-<uid> that is not private to
// this user (another user made it first) is refused, never used.
std::string privateDirectory() {
  for (const char* name : {"XDG_RUNTIME_DIR", "TMPDIR"}) {
    const char* dir = getenv(name);
    if (dir != nullptr && *dir == '/' && isPrivateDirectory(dir)) return dir;
  }
  const std::string dir = "/tmp/mcl-" + std::to_string(geteuid());
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw error(mclSystemError, "cannot create %s for the job's secret: %s",
                dir.c_str(), strerror(errno));
  if (!isPrivateDirectory(dir))
    throw error(mclSystemError,
                "%s is not a directory private to this user (uid %u): another "
                "user may have made it to read the job's secret. Remove it, "
                "or set MCL_SECRET on every rank",
                dir.c_str(), static_cast<unsigned>(geteuid()));
  return dir;
}

std::string hexOf(const uint8_t* bytes, size_t n) {
  std::string text;
  char two[3];
  for (size_t i = 0; i < n; ++i) {
    snprintf(two, sizeof(two), "%02x", bytes[i]);
    text += two;
  }
  return text;
}

// Reads the secret from an open file after checking it is private.
bool readPrivateSecret(int fd, const std::string& path, Secret* secret) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return false;
  if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0)
    throw error(mclSystemError,
                "the job's secret file %s is not private to this user (owner "
                "uid %u, mode %03o): refusing it; set MCL_SECRET on every rank",
                path.c_str(), static_cast<unsigned>(st.st_uid),
                static_cast<unsigned>(st.st_mode & 0777));
  return pread(fd, secret->data(), secret->size(), 0) ==
         static_cast<ssize_t>(secret->size());
}

}  // namespace

std::string jobSecretPath(const platform::SocketAddress& root,
                          const std::string& jobId) {
  uint8_t digest[8];
  crypto_generichash(digest, sizeof(digest),
                     reinterpret_cast<const unsigned char*>(jobId.data()),
                     jobId.size(), nullptr, 0);
  return privateDirectory() + "/mcl-secret-" + std::to_string(root.port()) +
         "-" + hexOf(digest, sizeof(digest));
}

Secret createJobSecret(const std::string& path) {
  const Secret secret = randomSecret();
  // Write it under a temporary name, then rename: a rank never reads half
  // a secret.
  const std::string temporary = path + ".new" + std::to_string(getpid());
  unlink(temporary.c_str());
  const int fd =
      open(temporary.c_str(),
           O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    throw error(mclSystemError, "cannot create the job's secret file %s: %s",
                temporary.c_str(), strerror(errno));
  const bool written = write(fd, secret.data(), secret.size()) ==
                           static_cast<ssize_t>(secret.size()) &&
                       fchmod(fd, 0600) == 0;
  close(fd);
  if (!written || rename(temporary.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    unlink(temporary.c_str());
    throw error(mclSystemError, "cannot write the job's secret file %s: %s",
                path.c_str(), strerror(saved));
  }
  MCL_LOG(Info, kLogInit,
          "MCL_SECRET is not set: made a random secret for this single-host "
          "job in %s (mode 0600)",
          path.c_str());
  return secret;
}

Secret readJobSecret(const std::string& path,
                     const platform::SocketAddress& root,
                     platform::Deadline deadline) {
  auto backoff = std::chrono::milliseconds(2);
  bool rootUp = false;
  while (true) {
    // Rank 0 writes the file before it listens: once its rendezvous takes
    // connections, the file there is this job's.
    if (!rootUp) {
      try {
        platform::connectTcp(
            root, std::min(deadline, Clock::now() + std::chrono::seconds(1)));
        rootUp = true;
      } catch (const std::exception&) {
      }
    }
    if (rootUp) {
      const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0) {
        Secret secret{};
        bool ok = false;
        try {
          ok = readPrivateSecret(fd, path, &secret);
        } catch (...) {
          close(fd);
          throw;
        }
        close(fd);
        if (ok) return secret;
      }
    }
    const auto now = Clock::now();
    if (now >= deadline && rootUp)
      throw error(mclTimeout,
                  "MCL_SECRET is not set, and rank 0's secret file %s for "
                  "this single-host job is not there: are all ranks on one "
                  "host, as one user, with the same XDG_RUNTIME_DIR/TMPDIR? "
                  "Else set MCL_SECRET to the same 32 hex digits on every "
                  "rank",
                  path.c_str());
    if (now >= deadline)
      throw error(mclTimeout,
                  "rank 0's rendezvous at %s never came up before the timeout "
                  "(MCL_SECRET is not set: rank 0 makes the job's secret when "
                  "it starts, and the other ranks wait for it)",
                  root.toString().c_str());
    std::this_thread::sleep_for(
        std::min<Clock::duration>(backoff, deadline - now));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(100));
  }
}

void removeJobSecret(const std::string& path) { unlink(path.c_str()); }

}  // namespace mcl
