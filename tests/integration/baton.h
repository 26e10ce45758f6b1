// Orders the steps of forked ranks by what happened, not by a guessed
// sleep: one rank passes a named baton when it reaches a point, another
// waits for it. A sleep long enough on a quiet machine is outrun on a busy
// one, and the test then checks something else than it says (a peer gone
// before the error it should see).
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

namespace mcl::test {

// Made in the test's process before runRanks forks, so every rank shares
// its directory; each baton is a file in it.
class Baton {
 public:
  Baton() {
    char dir[] = "/tmp/mcl-baton-XXXXXX";
    if (mkdtemp(dir) != nullptr) dir_ = dir;
  }
  ~Baton() {
    if (getpid() != owner_ || dir_.empty()) return;
    if (DIR* d = opendir(dir_.c_str())) {
      while (dirent* e = readdir(d))
        if (e->d_name[0] != '.') unlink(path(e->d_name).c_str());
      closedir(d);
    }
    rmdir(dir_.c_str());
  }
  Baton(const Baton&) = delete;
  Baton& operator=(const Baton&) = delete;

  void pass(const std::string& name) const {
    const int fd = open(path(name).c_str(), O_CREAT | O_WRONLY, 0600);
    if (fd >= 0) close(fd);
  }

  // Whether `name` was passed within `limit`.
  bool await(const std::string& name,
             std::chrono::seconds limit = std::chrono::seconds(60)) const {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (access(path(name).c_str(), F_OK) != 0) {
      if (std::chrono::steady_clock::now() >= until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

 private:
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  std::string dir_;
  pid_t owner_ = getpid();
};

}  // namespace mcl::test
