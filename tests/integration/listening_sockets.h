// The TCP sockets this process has listening, read from /proc (Linux):
// the security tests check that mcl listens only on named addresses, only
// during init.
#pragma once

#include <arpa/inet.h>
#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace mcl::test {

struct ListeningSocket {
  std::string host;  // "127.0.0.1", "::", ...
  int port = 0;
  bool wildcard() const { return host == "0.0.0.0" || host == "::"; }
  std::string text() const { return host + ":" + std::to_string(port); }
};

#if defined(__linux__)
// /proc/net/tcp writes an IPv4 address as the bytes of the 32-bit word in
// host order (little-endian here), IPv6 as four such words.
inline std::string procAddressHost(const std::string& hex) {
  unsigned char bytes[16];
  const size_t n = hex.size() / 2;
  for (size_t i = 0; i < n; ++i)
    bytes[i] = static_cast<unsigned char>(
        std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  for (size_t word = 0; word < n / 4; ++word)
    for (size_t i = 0; i < 2; ++i)
      std::swap(bytes[4 * word + i], bytes[4 * word + 3 - i]);
  char text[INET6_ADDRSTRLEN];
  inet_ntop(n == 4 ? AF_INET : AF_INET6, bytes, text, sizeof(text));
  return text;
}

inline std::vector<ListeningSocket> listeningSockets() {
  std::set<std::string> inodes;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) {
      char link[128];
      std::string path = std::string("/proc/self/fd/") + e->d_name;
      ssize_t len = readlink(path.c_str(), link, sizeof(link) - 1);
      if (len <= 0) continue;
      std::string target(link, static_cast<size_t>(len));
      if (target.rfind("socket:[", 0) == 0)
        inodes.insert(target.substr(8, target.size() - 9));
    }
    closedir(d);
  }
  std::vector<ListeningSocket> found;
  for (const char* table : {"/proc/self/net/tcp", "/proc/self/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the column names
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retr, uid, timeout,
          inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retr >>
          uid >> timeout >> inode;
      if (state != "0A" || inodes.count(inode) == 0) continue;  // 0A: LISTEN
      const size_t colon = local.find(':');
      found.push_back(
          {procAddressHost(local.substr(0, colon)),
           static_cast<int>(std::stoul(local.substr(colon + 1), nullptr, 16))});
    }
  }
  return found;
}
#endif

}  // namespace mcl::test
