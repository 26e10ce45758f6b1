/* mcl.hpp: a header-only C++ layer over mcl's C API (mcl.h), C++17.
 *
 *   mcl::Communicator comm = mcl::Communicator::fromEnv();
 *   std::vector<float> grad(n);
 *   comm.allReduce(grad);                       // in place, sum
 *   comm.allGather(mine, all);                  // sizes checked
 *
 * - Owners: Communicator (destroyed with the object; abort() to stop at
 *   once), Stream, Group (mclGroupStart in the constructor, mclGroupEnd at
 *   end() or destruction). All move-only.
 * - Every failure throws mcl::Error, which carries the result code and the
 *   text of mclGetLastError (the argument, rank, peer or link at fault).
 * - Buffers are anything with data() and size() (std::vector, std::array,
 *   std::span) or a C array; mcl::Span<T>{pointer, count} for raw memory.
 *   Element types map to mcl's (int8_t ... uint64_t, float, double); for
 *   half, bfloat16 and fp8 pass their bits (uint16_t, uint8_t) and name the
 *   type: allReduce(send, recv, mclSum, nullptr, mclBfloat16).
 * - Counts are checked against the communicator's size before a call is
 *   issued: all-gather's output holds size() inputs, and so on.
 */
#ifndef MCL_MCL_HPP
#define MCL_MCL_HPP

#include <mcl/mcl.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace mcl {

/* A failed mcl call: code() is the mclResult_t, what() the message. */
class Error : public std::runtime_error {
 public:
  Error(mclResult_t code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  mclResult_t code() const noexcept { return code_; }

 private:
  mclResult_t code_;
};

/* Throws Error unless r is mclSuccess; `what` names the call. */
inline void check(mclResult_t r, const char* what, mclComm_t comm = nullptr) {
  if (r == mclSuccess) return;
  const char* last = mclGetLastError(comm);
  std::string message = std::string(what) + ": " + mclGetErrorString(r);
  if (last != nullptr && *last != '\0')
    message += std::string(" (") + last + ")";
  throw Error(r, message);
}

/* mcl's element type for T, or a compile error for types mcl has no name
 * for (pass the bits and the type explicitly). */
template <typename T>
struct DataTypeOf;
template <>
struct DataTypeOf<int8_t> : std::integral_constant<mclDataType_t, mclInt8> {};
template <>
struct DataTypeOf<uint8_t> : std::integral_constant<mclDataType_t, mclUint8> {};
template <>
struct DataTypeOf<int32_t> : std::integral_constant<mclDataType_t, mclInt32> {};
template <>
struct DataTypeOf<uint32_t> : std::integral_constant<mclDataType_t, mclUint32> {
};
template <>
struct DataTypeOf<int64_t> : std::integral_constant<mclDataType_t, mclInt64> {};
template <>
struct DataTypeOf<uint64_t> : std::integral_constant<mclDataType_t, mclUint64> {
};
template <>
struct DataTypeOf<float> : std::integral_constant<mclDataType_t, mclFloat32> {};
template <>
struct DataTypeOf<double> : std::integral_constant<mclDataType_t, mclFloat64> {
};

/* Raw memory as a buffer argument: a pointer and a count of elements
 * (std::span does the same in C++20). */
template <typename T>
class Span {
 public:
  constexpr Span() noexcept = default;
  constexpr Span(T* data, size_t size) noexcept : data_(data), size_(size) {}
  constexpr T* data() const noexcept { return data_; }
  constexpr size_t size() const noexcept { return size_; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

/* The rendezvous of one communicator (a password: whoever holds it joins). */
class UniqueId {
 public:
  /* A new id; its rendezvous runs in this process until every rank joined. */
  static UniqueId create() {
    UniqueId id;
    check(mclGetUniqueId(&id.raw_), "mclGetUniqueId");
    return id;
  }
  static UniqueId fromString(const std::string& text) {
    UniqueId id;
    check(mclUniqueIdFromString(text.c_str(), &id.raw_),
          "mclUniqueIdFromString");
    return id;
  }
  std::string toString() const {
    char text[MCL_UNIQUE_ID_STRING_BYTES];
    check(mclUniqueIdToString(&raw_, text, sizeof(text)),
          "mclUniqueIdToString");
    return text;
  }
  const mclUniqueId& raw() const noexcept { return raw_; }
  mclUniqueId& raw() noexcept { return raw_; }

 private:
  mclUniqueId raw_{};
};

/* A communicator's settings; unset ones come from the environment. */
class Config {
 public:
  Config& timeoutSeconds(int seconds) {
    raw_.timeoutSeconds = seconds;
    return *this;
  }
  Config& transport(std::string name) {
    transport_ = std::move(name);
    return *this;
  }
  Config& name(std::string commName) {
    name_ = std::move(commName);
    return *this;
  }
  Config& algorithms(std::string spec) {
    algorithms_ = std::move(spec);
    return *this;
  }
  /* The C struct, pointing into this object: keep it alive for the call.
   * Blocking: the wrapper's constructors return a built communicator. */
  mclConfig_t* raw() {
    raw_.blocking = 1;
    raw_.transport = transport_.empty() ? nullptr : transport_.c_str();
    raw_.commName = name_.empty() ? nullptr : name_.c_str();
    raw_.algorithms = algorithms_.empty() ? nullptr : algorithms_.c_str();
    return &raw_;
  }

 private:
  mclConfig_t raw_ = MCL_CONFIG_INITIALIZER;
  std::string transport_, name_, algorithms_;
};

/* Operations queued on it run in order on a background thread. */
class Stream {
 public:
  Stream() { check(mclStreamCreate(&raw_), "mclStreamCreate"); }
  ~Stream() {
    if (raw_ != nullptr) mclStreamDestroy(raw_);  // waits for its work
  }
  Stream(Stream&& other) noexcept : raw_(std::exchange(other.raw_, nullptr)) {}
  Stream& operator=(Stream&& other) noexcept {
    if (this != &other) {
      if (raw_ != nullptr) mclStreamDestroy(raw_);
      raw_ = std::exchange(other.raw_, nullptr);
    }
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  /* Waits for everything queued; throws the first error since last time. */
  void synchronize() {
    check(mclStreamSynchronize(raw_), "mclStreamSynchronize");
  }
  /* True when idle, false while working; throws an operation's error. */
  bool idle() {
    const mclResult_t r = mclStreamQuery(raw_);
    if (r == mclInProgress) return false;
    check(r, "mclStreamQuery");
    return true;
  }
  mclStream_t get() const noexcept { return raw_; }
  operator mclStream_t() const noexcept { return raw_; }

 private:
  mclStream_t raw_ = nullptr;
};

/* Operations issued while it lives run together (mclGroupStart/End). */
class Group {
 public:
  Group() { check(mclGroupStart(), "mclGroupStart"); }
  /* Ends the group, throwing its error. */
  void end() {
    if (!open_) return;
    open_ = false;
    check(mclGroupEnd(), "mclGroupEnd");
  }
  ~Group() {
    if (open_) mclGroupEnd();  // an exception is on its way already
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

 private:
  bool open_ = true;
};

/* What a buffer argument is: anything std::data and std::size take. */
template <typename C>
using ElementOf = std::remove_cv_t<
    std::remove_pointer_t<decltype(std::data(std::declval<C&>()))>>;
template <typename C, typename = void>
struct IsBuffer : std::false_type {};
template <typename C>
struct IsBuffer<C, std::void_t<decltype(std::data(std::declval<C&>())),
                               decltype(std::size(std::declval<C&>()))>>
    : std::true_type {};
template <typename... C>
using IfBuffers =
    std::enable_if_t<(IsBuffer<std::remove_reference_t<C>>::value && ...)>;
/* mcl's type for a buffer's elements (a compile error for types it has no
 * name for: pass the type). */
template <typename C>
constexpr mclDataType_t TypeOf() {
  return DataTypeOf<ElementOf<std::remove_reference_t<C>>>::value;
}

class Communicator {
 public:
  /* Joins communicator `id` as `rank` of `nranks` (every rank calls it). */
  Communicator(int nranks, const UniqueId& id, int rank,
               Config config = Config()) {
    check(mclCommInitRankConfig(&raw_, nranks, id.raw(), rank, config.raw()),
          "mclCommInitRankConfig");
  }
  /* Joins the job a launcher started (see mclCommInitFromEnv). */
  static Communicator fromEnv(Config config = Config()) {
    mclComm_t raw = nullptr;
    check(mclCommInitFromEnv(&raw, config.raw()), "mclCommInitFromEnv");
    return Communicator(raw);
  }
  /* Takes ownership of a communicator made through the C API. */
  explicit Communicator(mclComm_t raw) noexcept : raw_(raw) {}
  /* An empty communicator (a rank that split off with no color). */
  Communicator() noexcept = default;
  ~Communicator() {
    if (raw_ != nullptr) mclCommDestroy(raw_);
  }
  Communicator(Communicator&& other) noexcept
      : raw_(std::exchange(other.raw_, nullptr)) {}
  Communicator& operator=(Communicator&& other) noexcept {
    if (this != &other) {
      if (raw_ != nullptr) mclCommDestroy(raw_);
      raw_ = std::exchange(other.raw_, nullptr);
    }
    return *this;
  }
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  explicit operator bool() const noexcept { return raw_ != nullptr; }
  mclComm_t get() const noexcept { return raw_; }

  int rank() const {
    int r = -1;
    check(mclCommUserRank(raw_, &r), "mclCommUserRank", raw_);
    return r;
  }
  int size() const {
    int n = 0;
    check(mclCommCount(raw_, &n), "mclCommCount", raw_);
    return n;
  }
  /* The cluster it runs on, as JSON (see mclCommGetTopology). */
  std::string topology() const {
    size_t bytes = 0;
    check(mclCommGetTopology(raw_, nullptr, &bytes), "mclCommGetTopology",
          raw_);
    // Room to spare: counters in it may grow a digit between the calls.
    std::string json(bytes + 64, '\0');
    bytes = json.size();
    check(mclCommGetTopology(raw_, json.data(), &bytes), "mclCommGetTopology",
          raw_);
    json.resize(std::strlen(json.c_str()));
    return json;
  }
  /* mclSuccess, or the error that failed the communicator. */
  mclResult_t asyncError() const {
    mclResult_t error = mclSuccess;
    check(mclCommGetAsyncError(raw_, &error), "mclCommGetAsyncError", raw_);
    return error;
  }
  /* Ranks passing the same color form a new communicator, ordered by key;
   * MCL_SPLIT_NOCOLOR gives an empty one. */
  Communicator split(int color, int key) const {
    mclComm_t raw = nullptr;
    check(mclCommSplit(raw_, color, key, &raw, nullptr), "mclCommSplit", raw_);
    return Communicator(raw);
  }
  /* Waits for queued work, then takes no more (destroy follows). */
  void finalize() { check(mclCommFinalize(raw_), "mclCommFinalize", raw_); }
  /* Stops every operation at once (any thread) and frees the communicator. */
  void abort() {
    if (raw_ == nullptr) return;
    mclComm_t raw = std::exchange(raw_, nullptr);
    check(mclCommAbort(raw), "mclCommAbort");
  }

  // Collectives. Buffers are anything with data() and size(): std::vector,
  // std::array, std::span, mcl::Span (a pointer and a count); C arrays.
  // One buffer means in place. type: mcl's element type (default: the
  // buffer's, see DataTypeOf).

  template <typename Send, typename Recv, typename = IfBuffers<Send, Recv>>
  void allReduce(const Send& send, Recv&& recv, mclRedOp_t op = mclSum,
                 mclStream_t stream = nullptr,
                 mclDataType_t type = TypeOf<Recv>()) {
    sameSize("allReduce", std::size(send), std::size(recv));
    check(mclAllReduce(std::data(send), std::data(recv), std::size(recv), type,
                       op, raw_, stream),
          "mclAllReduce", raw_);
  }
  template <typename Data, typename = IfBuffers<Data>>
  void allReduce(Data&& data, mclRedOp_t op = mclSum,
                 mclStream_t stream = nullptr,
                 mclDataType_t type = TypeOf<Data>()) {
    check(mclAllReduce(std::data(data), std::data(data), std::size(data), type,
                       op, raw_, stream),
          "mclAllReduce", raw_);
  }
  /* recv holds size() sends, in rank order. */
  template <typename Send, typename Recv, typename = IfBuffers<Send, Recv>>
  void allGather(const Send& send, Recv&& recv, mclStream_t stream = nullptr,
                 mclDataType_t type = TypeOf<Recv>()) {
    timesSize("allGather", "recv", std::size(recv), "send", std::size(send));
    check(mclAllGather(std::data(send), std::data(recv), std::size(send), type,
                       raw_, stream),
          "mclAllGather", raw_);
  }
  template <typename Data, typename = IfBuffers<Data>>
  void broadcast(Data&& data, int root, mclStream_t stream = nullptr,
                 mclDataType_t type = TypeOf<Data>()) {
    check(mclBroadcast(std::data(data), std::data(data), std::size(data), type,
                       root, raw_, stream),
          "mclBroadcast", raw_);
  }
  /* recv is written on the root only (elsewhere it may be empty). */
  template <typename Send, typename Recv, typename = IfBuffers<Send, Recv>>
  void reduce(const Send& send, Recv&& recv, int root, mclRedOp_t op = mclSum,
              mclStream_t stream = nullptr,
              mclDataType_t type = TypeOf<Recv>()) {
    if (rank() == root) sameSize("reduce", std::size(send), std::size(recv));
    check(mclReduce(std::data(send), std::data(recv), std::size(send), type, op,
                    root, raw_, stream),
          "mclReduce", raw_);
  }
  /* send holds size() blocks of recv's size; rank r gets block r. */
  template <typename Send, typename Recv, typename = IfBuffers<Send, Recv>>
  void reduceScatter(const Send& send, Recv&& recv, mclRedOp_t op = mclSum,
                     mclStream_t stream = nullptr,
                     mclDataType_t type = TypeOf<Recv>()) {
    timesSize("reduceScatter", "send", std::size(send), "recv",
              std::size(recv));
    check(mclReduceScatter(std::data(send), std::data(recv), std::size(recv),
                           type, op, raw_, stream),
          "mclReduceScatter", raw_);
  }
  /* Both hold size() blocks; block j of send goes to rank j. */
  template <typename Send, typename Recv, typename = IfBuffers<Send, Recv>>
  void allToAll(const Send& send, Recv&& recv, mclStream_t stream = nullptr,
                mclDataType_t type = TypeOf<Recv>()) {
    sameSize("allToAll", std::size(send), std::size(recv));
    const size_t n = static_cast<size_t>(size());
    if (std::size(send) % n != 0)
      throw Error(mclInvalidArgument,
                  "allToAll: " + std::to_string(std::size(send)) +
                      " elements do not split into " + std::to_string(n) +
                      " equal blocks");
    check(mclAlltoAll(std::data(send), std::data(recv), std::size(send) / n,
                      type, raw_, stream),
          "mclAlltoAll", raw_);
  }
  void barrier(mclStream_t stream = nullptr) {
    check(mclBarrier(raw_, stream), "mclBarrier", raw_);
  }
  /* Matches `peer`'s recv of the same size, in order. */
  template <typename Data, typename = IfBuffers<Data>>
  void send(const Data& data, int peer, mclStream_t stream = nullptr,
            mclDataType_t type = TypeOf<Data>()) {
    check(mclSend(std::data(data), std::size(data), type, peer, raw_, stream),
          "mclSend", raw_);
  }
  template <typename Data, typename = IfBuffers<Data>>
  void recv(Data&& data, int peer, mclStream_t stream = nullptr,
            mclDataType_t type = TypeOf<Data>()) {
    check(mclRecv(std::data(data), std::size(data), type, peer, raw_, stream),
          "mclRecv", raw_);
  }

 private:
  static void sameSize(const char* call, size_t send, size_t recv) {
    if (send != recv)
      throw Error(mclInvalidArgument,
                  std::string(call) + ": send holds " + std::to_string(send) +
                      " elements and recv " + std::to_string(recv) +
                      "; they must match");
  }
  // big must hold size() times small.
  void timesSize(const char* call, const char* bigName, size_t big,
                 const char* smallName, size_t small) const {
    const size_t n = static_cast<size_t>(size());
    if (big != small * n)
      throw Error(mclInvalidArgument,
                  std::string(call) + ": " + bigName + " holds " +
                      std::to_string(big) + " elements; it must hold " +
                      smallName + "'s " + std::to_string(small) + " x " +
                      std::to_string(n) +
                      " ranks = " + std::to_string(small * n));
  }

  mclComm_t raw_ = nullptr;
};

}  // namespace mcl

#endif /* MCL_MCL_HPP */
