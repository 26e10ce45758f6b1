#include "common/progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

namespace mcl::perf {

namespace {
// Often enough to look alive, rarely enough to cost nothing.
constexpr auto kInterval = std::chrono::milliseconds(100);
}  // namespace

Progress::Progress(bool printer, std::string what, size_t total)
    : enabled_(printer && isatty(STDERR_FILENO) == 1),
      what_(std::move(what)),
      total_(total) {}

Progress::~Progress() { clear(); }

void Progress::clear() {
  if (!enabled_ || shownWidth_ == 0) return;
  std::fprintf(stderr, "\r%*s\r", int(shownWidth_), "");
  std::fflush(stderr);
  shownWidth_ = 0;
}

void Progress::step(const std::string& detail) {
  ++done_;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (done_ > 1 && now - lastShown_ < kInterval) return;
  lastShown_ = now;
  char line[256];
  const int n = std::snprintf(line, sizeof line, "mcl-perf: %s %zu/%zu: %s",
                              what_.c_str(), done_, total_, detail.c_str());
  const size_t width = n > 0 ? size_t(n) : 0;
  // Pad over what a longer previous line left.
  std::fprintf(stderr, "\r%s%*s", line,
               int(shownWidth_ > width ? shownWidth_ - width : 0), "");
  std::fflush(stderr);
  shownWidth_ = std::max(shownWidth_, width);
}

}  // namespace mcl::perf
