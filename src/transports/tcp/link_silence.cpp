#include "transports/tcp/link_silence.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/log.h"
#include "platform/tcp_progress.h"

namespace mcl::transport::tcp {

bool socketResentBytes(int fd, uint64_t* bytes) {
  platform::TcpProgress progress;
  *bytes = 0;
  if (!platform::readTcpProgress(fd, &progress)) return false;
  *bytes = progress.resentBytes;
  return true;
}

LinkSilence::LinkSilence(std::string label,
                         std::vector<std::string> stripeLinks)
    : label_(std::move(label)), stripeLinks_(std::move(stripeLinks)) {
  for (const std::string& l : stripeLinks_) {
    bool known = false;
    for (const std::string& k : links_) known = known || k == l;
    if (!known) links_.push_back(l);
  }
  silent_.assign(links_.size(), false);
  said_.assign(links_.size(), false);
}

bool LinkSilence::socketSilent(size_t i, int fd, int64_t now, int* timeouts) {
  *timeouts = 0;
  platform::TcpProgress progress;
  if (fd < 0 || !platform::readTcpProgress(fd, &progress)) return false;
  history_.resize(stripeLinks_.size());
  historyFd_.resize(stripeLinks_.size(), -1);
  if (historyFd_[i] != fd) {
    history_[i] = platform::SilenceHistory();
    historyFd_[i] = fd;
  }
  return history_[i].silent(progress, now, timeouts);
}

bool LinkSilence::silent(const std::string& link) const {
  for (size_t l = 0; l < links_.size(); ++l)
    if (links_[l] == link) return silent_[l];
  return false;
}

std::string LinkSilence::check(const std::vector<int>& fds, int64_t now,
                               const std::vector<bool>& down) {
  if (stripeLinks_.size() != fds.size() || links_.empty()) return "";
  if (now < nextLookNs_) return trouble_;
  nextLookNs_ = now + 100'000'000;
  std::vector<int> worst(links_.size(), 0);
  std::vector<bool> silent(links_.size(), false);
  std::vector<bool> linkDown(links_.size(), false);
  for (size_t i = 0; i < fds.size(); ++i) {
    size_t link = 0;
    while (links_[link] != stripeLinks_[i]) ++link;
    if (i < down.size() && down[i]) linkDown[link] = true;
    int timeouts = 0;
    if (socketSilent(i, fds[i], now, &timeouts)) silent[link] = true;
    if (timeouts > worst[link]) worst[link] = timeouts;
  }
  size_t quiet = 0;
  std::string names;
  for (size_t l = 0; l < links_.size(); ++l) {
    if (silent[l]) {
      ++quiet;
      names += (names.empty() ? "" : ", ") + links_[l] + " (" +
               (linkDown[l] ? std::string("down")
                            : std::to_string(worst[l]) +
                                  " retransmission timeouts in a row") +
               ")";
    }
    if (silent[l] == silent_[l]) continue;
    silent_[l] = silent[l];
    // A link the watch says is down is silent for that reason, said
    // already: neither its silence nor its end is news.
    if (silent[l] && linkDown[l]) continue;
    if (!silent[l] && !said_[l]) continue;
    said_[l] = silent[l];
    if (silent[l])
      MCL_LOG(Warn, kLogInit,
              "%s: %s takes bytes and acknowledges none (%d retransmission "
              "timeouts in a row, nothing heard for over a second) though its "
              "link is up: the cable, its far port, or the peer's host "
              "carries nothing. What is striped over it goes on over the "
              "other links where there are any",
              label_.c_str(), links_[l].c_str(), worst[l]);
    else
      MCL_LOG(Warn, kLogInit, "%s: %s acknowledges again", label_.c_str(),
              links_[l].c_str());
  }
  trouble_ = quiet == links_.size()
                 ? "every link is silent: " + names +
                       ": nothing sent on it is acknowledged (the cable, its "
                       "far port, or the peer's host carries nothing)"
                 : "";
  return trouble_;
}

}  // namespace mcl::transport::tcp
