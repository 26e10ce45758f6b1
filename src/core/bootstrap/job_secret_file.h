// A job started without a secret whose ranks all run on this host: rank 0
// makes a random secret and leaves it in a file only this user can read
// (mode 0600, in a directory only this user can enter); the other ranks
// read it there. Another local user can see the rendezvous port but not
// the secret, so cannot join.
#pragma once

#include <string>

#include "base/auth.h"
#include "platform/socket.h"

namespace mcl {

// The file for the job whose rendezvous is at root (loopback) with jobId
// (may be empty): the same path on every rank of one user. Throws
// mclSystemError when no private directory can be had (naming it).
std::string jobSecretPath(const platform::SocketAddress& root,
                          const std::string& jobId);

// Rank 0: a fresh random secret, written to path (a file left there by an
// earlier job is replaced). Throws mclSystemError naming the path.
Secret createJobSecret(const std::string& path);

// The other ranks: waits until rank 0's rendezvous at root accepts
// connections (it writes the file before it listens, so the file is then
// this job's, not an earlier one's), then reads the secret, checking the
// file is this user's and nobody else's to read. Throws mclTimeout at the
// deadline saying what was missing, mclSystemError when the file is not
// private.
Secret readJobSecret(const std::string& path,
                     const platform::SocketAddress& root,
                     platform::Deadline deadline);

// Rank 0, once every rank has read it (or init failed). Best effort.
void removeJobSecret(const std::string& path);

}  // namespace mcl
