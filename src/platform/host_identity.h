// Who this host is: an identity shared by all processes of one host (and one
// network namespace) and different across hosts, so ranks can tell which
// peers they reach through shared memory.
#pragma once

#include <cstdint>
#include <string>

namespace mcl::platform {

// Stable for the boot: Linux boot_id + network-namespace inode; macOS the
// hardware UUID. Printable, at most 100 characters.
std::string hostIdentity();

// The host name, for messages.
std::string hostName();

// True when process pid exists and has not exited (a zombie counts as
// gone).
bool processAlive(int pid);

// A number for this process's pid namespace (Linux: its inode; elsewhere
// 0): pids of processes that share /dev/shm but not this namespace
// (containers under docker --ipc=host) mean nothing here.
uint64_t pidNamespace();

// The process environment ("NAME=value" strings, null-terminated).
char** environment();

}  // namespace mcl::platform
