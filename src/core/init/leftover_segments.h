// Segments that killed processes left in /dev/shm: a rank killed between
// creating its rings and the end of init (the rings' names go once every
// peer mapped them), and mclMemAlloc memory of a process that never freed
// it. Init removes those whose owner is gone, so a host's /dev/shm does not
// fill up job after job.
#pragma once

namespace mcl {

// Removes every such segment of this user whose owner, in this pid
// namespace, is gone, with an INFO line each. At most one sweep per 10 s
// per process. Linux only: macOS cannot list POSIX shared-memory names.
void removeLeftoverSegments();

}  // namespace mcl
