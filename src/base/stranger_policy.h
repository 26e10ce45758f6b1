// How every listener of mcl (the rendezvous, the side channel, the TCP
// transport) treats connections that have not proven the secret, and how a
// connecting rank tries again: one policy, so no listener is the weak one.
// Every connection is accepted and served side by side with the others, so
// a rank among strangers is answered in its first round trip; a stranger
// costs a descriptor for at most kProofWindow.
#pragma once

#include <chrono>
#include <cstddef>

namespace mcl::stranger_policy {

// A peer proves the secret within a round trip; a connection that has not
// within this window is dropped (a slow rank connects again).
constexpr auto kProofWindow = std::chrono::seconds(1);
// Past this many unproven connections from one address (descriptors are
// finite) its oldest goes: a rank proves itself within a round trip, so the
// oldest is the likeliest stranger. One that proved itself never goes.
constexpr size_t kMaxUnprovenPerAddress = 512;
// New connections taken per listener between two reads of the others: a
// flood of connections cannot keep a listener from reading a rank's proof.
constexpr int kAcceptsPerRound = 128;
// Every listener's kernel queue: room for a flood's connections between two
// rounds of accepts, so a rank's connection is not refused in front of them
// (a refused SYN waits a second before the kernel tries again).
constexpr int kListenBacklog = 256;
// A connecting rank's attempt: the first may take this long before the
// rank connects again, each later one twice as long, up to the longest.
constexpr auto kFirstAttempt = std::chrono::seconds(2);
constexpr auto kLongestAttempt = std::chrono::seconds(8);

}  // namespace mcl::stranger_policy
