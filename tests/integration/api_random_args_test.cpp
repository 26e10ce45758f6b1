// The C API under random argument combinations: every call returns a known
// result code, a failure comes with a message, and nothing crashes, hangs
// or leaks. One rank (so any combination of valid arguments is a valid job)
// over shared memory; handles live, destroyed and made up; pointers null,
// aligned, misaligned and overlapping; counts small and overflowing; types,
// ops and roots in and out of range; groups opened and closed at random;
// streams. The seed is printed; MCL_RANDOM_API_SEED replays one.
#include <gtest/gtest.h>
#include <mcl/mcl.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr size_t kBufferBytes = 64 * 1024;
constexpr int kCalls = 20000;

bool knownResult(mclResult_t r) {
  // mclInternalError is a bug in mcl: not among them.
  return r == mclSuccess || r == mclSystemError || r == mclInvalidArgument ||
         r == mclInvalidUsage || r == mclRemoteError || r == mclTimeout ||
         r == mclInProgress;
}

class RandomApi {
 public:
  explicit RandomApi(uint32_t seed) : random_(seed) {}

  template <typename T>
  T pick(const std::vector<T>& choices) {
    return choices[random_() % choices.size()];
  }
  int between(int low, int high) {
    return low +
           static_cast<int>(random_() % static_cast<uint32_t>(high - low + 1));
  }

  std::mt19937& engine() { return random_; }

 private:
  std::mt19937 random_;
};

TEST(RandomApiArguments, EveryCallReturnsAKnownCodeAndNothingBreaks) {
  const char* replay = getenv("MCL_RANDOM_API_SEED");
  const uint32_t seed = replay != nullptr
                            ? static_cast<uint32_t>(strtoul(replay, nullptr, 0))
                            : std::random_device{}();
  std::cout << "seed " << seed << " (MCL_RANDOM_API_SEED replays it)\n";
  RandomApi r(seed);

  mclUniqueId id;
  ASSERT_EQ(mclGetUniqueId(&id), mclSuccess);
  mclConfig_t config = MCL_CONFIG_INITIALIZER;
  config.timeoutSeconds = 10;
  config.transport = "shm";
  mclComm_t comm = nullptr;
  ASSERT_EQ(mclCommInitRankConfig(&comm, 1, id, 0, &config), mclSuccess);
  mclComm_t destroyed = nullptr;
  ASSERT_EQ(mclGetUniqueId(&id), mclSuccess);
  ASSERT_EQ(mclCommInitRankConfig(&destroyed, 1, id, 0, &config), mclSuccess);
  ASSERT_EQ(mclCommDestroy(destroyed), mclSuccess);
  mclStream_t stream = nullptr, deadStream = nullptr;
  ASSERT_EQ(mclStreamCreate(&stream), mclSuccess);
  ASSERT_EQ(mclStreamCreate(&deadStream), mclSuccess);
  ASSERT_EQ(mclStreamDestroy(deadStream), mclSuccess);
  std::vector<mclComm_t> children;
  float scalar = 0.5f;
  mclRedOp_t preMul = mclSum, deadOp = mclSum;
  ASSERT_EQ(mclRedOpCreatePreMulSum(&preMul, &scalar, mclFloat32,
                                    mclScalarHostImmediate, comm),
            mclSuccess);
  ASSERT_EQ(mclRedOpCreatePreMulSum(&deadOp, &scalar, mclFloat32,
                                    mclScalarHostImmediate, comm),
            mclSuccess);
  ASSERT_EQ(mclRedOpDestroy(deadOp, comm), mclSuccess);

  std::vector<char> a(kBufferBytes), b(kBufferBytes);
  void* shared = nullptr;
  ASSERT_EQ(mclMemAlloc(&shared, kBufferBytes), mclSuccess);
  char* m = static_cast<char*>(shared);
  const std::vector<char*> pointers = {
      nullptr,  a.data(), a.data() + 1, a.data() + 3, a.data() + 8192,
      b.data(), m,        m + 4096,     m + 1};
  // At most 1024 elements of 8 bytes from an offset of at most 8 KiB stay
  // in the buffers; the last two overflow the address space for any type.
  const std::vector<size_t> counts = {0,    1,        7,
                                      1000, SIZE_MAX, (SIZE_MAX >> 1) + 1};
  auto comms = [&] {
    std::vector<mclComm_t> c = {comm, comm, nullptr, destroyed,
                                reinterpret_cast<mclComm_t>(0x10)};
    if (!children.empty()) c.push_back(children.back());
    return c;
  };
  const std::vector<mclStream_t> streams = {
      nullptr, nullptr, stream, deadStream,
      reinterpret_cast<mclStream_t>(0x20)};
  const std::vector<int> roots = {-1, 0, 0, 1, INT_MAX, INT_MIN};
  std::vector<void*> handles;  // mclCommRegister's
  int groupDepth = 0;
  std::string lastCall;
  int succeeded = 0;

  for (int call = 0; call < kCalls; ++call) {
    char* send = r.pick(pointers);
    char* recv = r.pick(pointers);
    size_t count = r.pick(counts);
    if (count == 1000) count = static_cast<size_t>(r.between(0, 1024));
    auto type = static_cast<mclDataType_t>(r.between(-2, mclNumTypes + 1));
    auto op = static_cast<mclRedOp_t>(r.between(-2, mclNumOps + 1));
    if (r.between(0, 9) == 0)
      op = r.pick(std::vector<mclRedOp_t>{preMul, deadOp});
    const int root = r.pick(roots);
    const mclComm_t c = r.pick(comms());
    const mclStream_t s = r.pick(streams);
    mclResult_t result = mclSuccess;
    const int which = r.between(0, 21);
    switch (which) {
      case 0:
        result = mclAllReduce(send, recv, count, type, op, c, s);
        break;
      case 1:
        result = mclAllGather(send, recv, count, type, c, s);
        break;
      case 2:
        result = mclBroadcast(send, recv, count, type, root, c, s);
        break;
      case 3:
        result = mclReduce(send, recv, count, type, op, root, c, s);
        break;
      case 4:
        result = mclReduceScatter(send, recv, count, type, op, c, s);
        break;
      case 5:
        result = mclAlltoAll(send, recv, count, type, c, s);
        break;
      case 6:
        result = mclBarrier(c, s);
        break;
      case 7:
        // Point-to-point with oneself only makes sense in a group; a lone
        // send would wait for a receive nobody posts.
        if (groupDepth > 0)
          result = r.between(0, 1) ? mclSend(send, count, type, root, c, s)
                                   : mclRecv(recv, count, type, root, c, s);
        break;
      case 8:
        if (groupDepth < 3) {
          result = mclGroupStart();
          if (result == mclSuccess) ++groupDepth;
        }
        break;
      case 9:
        result = mclGroupEnd();
        if (groupDepth > 0) --groupDepth;
        break;
      case 10: {
        int value = 0;
        result = r.between(0, 1)
                     ? mclCommCount(c, r.between(0, 3) ? &value : nullptr)
                     : mclCommUserRank(c, r.between(0, 3) ? &value : nullptr);
        break;
      }
      case 11: {
        mclResult_t async = mclSuccess;
        result = mclCommGetAsyncError(c, r.between(0, 3) ? &async : nullptr);
        break;
      }
      case 12:
        result = s == nullptr      ? mclSuccess
                 : r.between(0, 1) ? mclStreamQuery(s)
                                   : mclStreamSynchronize(s);
        break;
      case 13: {
        char text[4096];
        size_t size = r.pick(std::vector<size_t>{0, 1, 10, sizeof(text)});
        result = mclCommGetTopology(c, r.between(0, 3) ? text : nullptr,
                                    r.between(0, 5) ? &size : nullptr);
        break;
      }
      case 14: {
        const char* name = nullptr;
        const auto func = static_cast<mclFunc_t>(r.between(-1, 8));
        result = r.between(0, 1)
                     ? mclGetAlgorithmName(func, r.between(-2, 8), &name)
                     : mclCommGetAlgorithm(c, func, count, type, &name);
        break;
      }
      case 15: {
        double us = 0;
        const char* algorithm =
            r.pick(std::vector<const char*>{nullptr, "ring", "tree", "x", ""});
        result = mclCommPredict(c, static_cast<mclFunc_t>(r.between(-1, 8)),
                                algorithm, count, type, &us);
        break;
      }
      case 16: {
        void* handle = nullptr;
        result = mclCommRegister(c, send, count == SIZE_MAX ? count : 4096,
                                 r.between(0, 5) ? &handle : nullptr);
        if (result == mclSuccess) handles.push_back(handle);
        break;
      }
      case 17:
        if (!handles.empty()) {
          result = mclCommDeregister(c, handles.back());
          if (result == mclSuccess) handles.pop_back();
        } else {
          result = mclCommDeregister(c, reinterpret_cast<void*>(0x30));
        }
        break;
      case 18: {
        // The id's string form, mangled at one place.
        char text[MCL_UNIQUE_ID_STRING_BYTES];
        mclUniqueId back;
        if (mclUniqueIdToString(&id, text, sizeof(text)) == mclSuccess) {
          size_t len = strlen(text);
          if (len > 0)
            text[r.between(0, static_cast<int>(len) - 1)] =
                static_cast<char>(r.between(1, 255));
          result = mclUniqueIdFromString(text, &back);
        }
        break;
      }
      case 19: {
        const char *name = nullptr, *value = nullptr, *doc = nullptr;
        result = mclGetParam(r.between(-3, 80), &name, &value, &doc);
        mclGetErrorString(static_cast<mclResult_t>(r.between(-5, 20)));
        break;
      }
      case 20:
        if (groupDepth == 0 && children.size() < 4) {
          mclComm_t child = nullptr;
          result = mclCommSplit(c, r.pick(std::vector<int>{0, 1, -1, -5}), root,
                                r.between(0, 5) ? &child : nullptr, nullptr);
          if (result == mclSuccess && child != nullptr)
            children.push_back(child);
        }
        break;
      default:
        if (!children.empty() && groupDepth == 0) {
          result = mclCommDestroy(children.back());
          children.pop_back();
        }
        break;
    }
    lastCall = "call " + std::to_string(call) + " (case " +
               std::to_string(which) + ")";
    ASSERT_TRUE(knownResult(result)) << lastCall << ": " << result;
    if (result != mclSuccess) {
      ASSERT_STRNE(mclGetLastError(nullptr), "") << lastCall;
    } else {
      ++succeeded;
    }
  }
  std::cout << succeeded << " of " << kCalls << " calls succeeded\n";
  // Valid combinations come up often enough to run real work too.
  EXPECT_GT(succeeded, kCalls / 20);
  while (groupDepth-- > 0) mclGroupEnd();
  EXPECT_NE(mclStreamSynchronize(stream), mclTimeout);
  EXPECT_EQ(mclStreamDestroy(stream), mclSuccess);
  for (void* handle : handles) mclCommDeregister(comm, handle);
  for (mclComm_t child : children) mclCommDestroy(child);
  mclRedOpDestroy(preMul, comm);
  // The communicator may have failed (a call it accepted failed later);
  // destroying it must work either way.
  EXPECT_EQ(mclCommDestroy(comm), mclSuccess) << mclGetLastError(nullptr);
  EXPECT_EQ(mclMemFree(shared), mclSuccess) << mclGetLastError(nullptr);
}

}  // namespace
