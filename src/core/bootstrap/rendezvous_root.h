// The rendezvous root's state, one per unique id: the connections it
// serves, the strangers among them, and the join table of the ranks. Its
// work is split by concern: root_connections.cpp (the accept and read loop,
// sends, the end), root_strangers.cpp (what a connection that has not
// proven the secret may cost), root_joins.cpp (proofs, hellos, the table
// of ranks and init's all-gathers). bootstrap_root.h is the outside's view.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/auth.h"
#include "base/sealed_channel.h"
#include "base/stranger_policy.h"
#include "core/bootstrap/bootstrap_protocol.h"
#include "platform/socket.h"

namespace mcl::rendezvous {

using platform::Clock;
using platform::Deadline;

// Strangers get only as many buffered bytes as the next legitimate message
// can have.
constexpr size_t kMaxProofBytes = 8 + sizeof(Nonce) + sizeof(Mac);
constexpr size_t kMaxHelloBytes = 8 + 4 + 4096 + kSealOverhead;
constexpr auto kSendWindow = std::chrono::seconds(5);
constexpr auto kGiveUpMargin = std::chrono::milliseconds(300);
constexpr int kPollMs = 20;

enum class State { AwaitProof, AwaitHello, Joined, Done };

struct Client {
  platform::Socket socket;
  std::string address;
  std::string host;  // the address without its port: per-address limits
  State state = State::AwaitProof;
  Nonce nonce{};
  Deadline accepted;
  Deadline authDeadline;
  std::unique_ptr<Sealer> sealer;  // once the proof is checked
  std::unique_ptr<Opener> opener;
  std::vector<uint8_t> inbox;
  Hello hello;
  bool hasContribution = false;
  std::vector<uint8_t> contribution;
};

class RendezvousRoot {
 public:
  RendezvousRoot(std::vector<platform::Socket> listeners, const Secret& secret,
                 int timeoutSeconds, std::function<void()> whenClosed);
  void run();

 private:
  // root_connections.cpp
  void loop();
  std::string timeoutMessage() const;
  void acceptSome(int listenFd);
  void readClient(Client& c);
  void processFrames(Client& c);
  static std::string who(const Client& c);
  void send(Client& c, FrameType type, const std::vector<uint8_t>& payload);
  void disconnect(Client& c, const char* why);
  // Tells every joined rank why init failed, then ends the root.
  void failAll(int code, const std::string& message);
  // root_strangers.cpp
  static size_t inboxLimit(const Client& c);
  // Makes room for a new connection from host: its oldest connection that
  // has not proven the secret goes when host has too many.
  void limitUnproven(const std::string& host);
  // The oldest connection still to prove itself, to free a descriptor.
  bool dropOldestStranger();
  void dropStranger(Client& c);
  void dropExpired();
  // root_joins.cpp
  void refuseUnsealedHello(Client& c, const Frame& f);
  void handle(Client& c, const Frame& f);
  void handleProof(Client& c, const Frame& f);
  void handleHello(Client& c, const Frame& f);
  void welcomeAll();
  void handleJoined(Client& c, const Frame& f);
  // A rank whose init failed says why before it leaves: every rank then
  // fails with that reason, not with "rank r closed the connection".
  void relayFailure(Client& c, const Frame& f);

  std::vector<platform::Socket> listeners_;
  Secret secret_;
  std::function<void()> whenClosed_;
  Deadline deadline_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::vector<Client*> ranks_;
  int nranks_ = 0;
  int firstRank_ = -1;
  int joined_ = 0;
  int done_ = 0;
  uint64_t commId_ = 0;
  int contributions_ = 0;
  uint32_t round_ = 0;
  bool finished_ = false;
  size_t strangersDropped_ = 0;
};

}  // namespace mcl::rendezvous
