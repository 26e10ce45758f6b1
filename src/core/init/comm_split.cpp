#include "core/init/comm_split.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/session_keys.h"
#include "core/bootstrap/new_unique_id.h"
#include "core/bootstrap/unique_id.h"
#include "core/init/comm_init.h"
#include "core/run/execute.h"

namespace mcl {

namespace {

// What a split with no config inherits. Its strings are the parent's.
mclConfig_t inheritedConfig(const mclComm& parent) {
  mclConfig_t inherited = MCL_CONFIG_INITIALIZER;
  inherited.timeoutSeconds = parent.settings.timeoutSeconds;
  inherited.transport = parent.settings.transport.c_str();
  inherited.commName =
      parent.settings.name.empty() ? nullptr : parent.settings.name.c_str();
  inherited.algorithms = parent.settings.algoSpec.c_str();
  inherited.blocking = parent.settings.blocking ? 1 : 0;
  return inherited;
}

struct Member {
  int32_t color;
  int32_t key;
};

// Every rank's `mine`, through the parent's own all-gather.
template <class T>
std::vector<T> allGather(mclComm& parent, const T& mine) {
  std::vector<T> all(static_cast<size_t>(parent.nranks));
  OpArgs op;
  op.kind = Collective::AllGather;
  op.sendbuff = &mine;
  op.recvbuff = all.data();
  op.count = sizeof(T);
  op.type = mclUint8;
  executeNow(parent, op);
  return all;
}

// The new communicator's secret, the same on each of its members, from the
// parent's and what identifies this split among the parent's.
Secret splitSecret(const mclComm& parent, uint64_t split, int color) {
  return deriveChildSecret(parent.secret,
                           "split " + std::to_string(parent.commId) + " #" +
                               std::to_string(split) + " color " +
                               std::to_string(color));
}

// An id as it may travel: without its secret.
mclUniqueId withSecret(const mclUniqueId& id, const Secret& secret) {
  UniqueIdContents contents = decodeUniqueId(id);
  contents.secret = secret;
  return encodeUniqueId(contents);
}

}  // namespace

SplitSettings splitSettings(const mclComm& parent, const mclConfig_t* config) {
  SplitSettings s;
  const mclConfig_t inherited = inheritedConfig(parent);
  try {
    s.settings = loadSettings(config != nullptr ? config : &inherited);
  } catch (...) {
    s.error = std::current_exception();
  }
  return s;
}

std::unique_ptr<mclComm> splitComm(mclComm& parent, int color, int key,
                                   const SplitSettings& settings) {
  const uint64_t split = parent.splitsStarted++;
  const std::vector<Member> members = allGather(parent, Member{color, key});
  // Checked after the exchange, so that every rank fails alike.
  for (int r = 0; r < parent.nranks; ++r)
    if (members[size_t(r)].color < 0 &&
        members[size_t(r)].color != MCL_SPLIT_NOCOLOR)
      throw error(mclInvalidArgument,
                  "%s: mclCommSplit: rank %d passed color %d (use a color >= "
                  "0, or MCL_SPLIT_NOCOLOR to join no new communicator)",
                  parent.label().c_str(), r, members[size_t(r)].color);
  // The new communicator's ranks, in order: by key, then parent rank.
  std::vector<int> group;
  for (int r = 0; r < parent.nranks; ++r)
    if (color != MCL_SPLIT_NOCOLOR && members[size_t(r)].color == color)
      group.push_back(r);
  std::stable_sort(group.begin(), group.end(), [&](int a, int b) {
    return members[size_t(a)].key < members[size_t(b)].key;
  });
  const bool leader = !group.empty() && group.front() == parent.rank;
  // The leader's id, or its failure to make one: the other ranks must not
  // wait for a rendezvous that never started.
  struct IdOrFailure {
    int32_t failed = 0;
    mclUniqueId id{};
  } mine;
  std::string why;
  // The id travels through the parent without its secret: each member
  // derives that (a transport the wire protection leaves in the clear must
  // not carry it).
  const Secret secret =
      color == MCL_SPLIT_NOCOLOR ? Secret{} : splitSecret(parent, split, color);
  if (leader) {
    try {
      mine.id = withSecret(newUniqueId(secret), Secret{});
    } catch (const std::exception& e) {
      mine.failed = 1;
      why = e.what();
    }
  }
  const std::vector<IdOrFailure> ids = allGather(parent, mine);
  if (color == MCL_SPLIT_NOCOLOR) return nullptr;
  if (ids[size_t(group.front())].failed)
    throw error(mclSystemError,
                "%s: mclCommSplit: rank %d could not start the new "
                "communicator's rendezvous%s%s",
                parent.label().c_str(), group.front(), why.empty() ? "" : ": ",
                why.c_str());
  const int newRank = static_cast<int>(
      std::find(group.begin(), group.end(), parent.rank) - group.begin());
  if (settings.error) std::rethrow_exception(settings.error);
  return initComm(static_cast<int>(group.size()),
                  withSecret(ids[size_t(group.front())].id, secret), newRank,
                  settings.settings, parent.emuMac);
}

}  // namespace mcl
