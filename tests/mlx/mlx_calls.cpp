#include "mlx_calls.h"

#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "half_bits.h"
#include "mpi_abi.h"

namespace mlx_replay {

namespace {

using mcl::mpi::bf16ToFloat;
using mcl::mpi::floatToBf16;
using mcl::mpi::floatToHalf;
using mcl::mpi::halfToFloat;

enum class Form { Bool, Signed, Unsigned, F16, Bf16, F32, F64, C64 };
enum class Reduce { Sum, Max, Min };

struct Dtype {
  const char* name;
  MPI_Datatype handle;
  Form form;
  size_t bytes;
};

std::vector<Dtype> dtypes(const Mpi& m) {
  return {{"bool", m.boolean, Form::Bool, 1},
          {"int8", m.int8, Form::Signed, 1},
          {"uint8", m.uint8, Form::Unsigned, 1},
          {"int16", m.int16, Form::Signed, 2},
          {"uint16", m.uint16, Form::Unsigned, 2},
          {"int32", m.int32, Form::Signed, 4},
          {"uint32", m.uint32, Form::Unsigned, 4},
          {"int64", m.int64, Form::Signed, 8},
          {"uint64", m.uint64, Form::Unsigned, 8},
          {"float16", m.float16, Form::F16, 2},
          {"bfloat16", m.bfloat16, Form::Bf16, 2},
          {"float32", m.float32, Form::F32, 4},
          {"float64", m.float64, Form::F64, 8},
          {"complex64", m.complex64, Form::C64, 8}};
}

// Rank r's element i: small integers, so every sum is exact in every type.
std::complex<double> valueOf(Form form, int rank, size_t i) {
  const double s = double(int((rank * 7 + i * 3) % 11) - 5);
  switch (form) {
    case Form::Bool:
      return (rank + i) % 3 == 0 ? 1 : 0;
    case Form::Unsigned:
      return s + 5;
    case Form::C64:
      return {s, double(int((rank * 5 + i) % 7) - 3)};
    default:
      return s;
  }
}

void encode(Form form, size_t bytes, std::complex<double> v, void* out) {
  const double x = v.real();
  switch (form) {
    case Form::Bool:
    case Form::Unsigned:
    case Form::Signed: {
      const int64_t n = int64_t(x);
      std::memcpy(out, &n, bytes);  // little-endian: the low bytes
      return;
    }
    case Form::F16: {
      const uint16_t h = floatToHalf(float(x));
      std::memcpy(out, &h, 2);
      return;
    }
    case Form::Bf16: {
      const uint16_t h = floatToBf16(float(x));
      std::memcpy(out, &h, 2);
      return;
    }
    case Form::F32: {
      const float f = float(x);
      std::memcpy(out, &f, 4);
      return;
    }
    case Form::F64:
      std::memcpy(out, &x, 8);
      return;
    case Form::C64: {
      const float pair[2] = {float(x), float(v.imag())};
      std::memcpy(out, pair, 8);
      return;
    }
  }
}

bool lessThan(Form form, std::complex<double> a, std::complex<double> b) {
  if (form == Form::C64)
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  return a.real() < b.real();
}

std::complex<double> reduceAll(Form form, Reduce how, int size, size_t i) {
  std::complex<double> acc = valueOf(form, 0, i);
  for (int r = 1; r < size; ++r) {
    const std::complex<double> v = valueOf(form, r, i);
    if (form == Form::Bool && how != Reduce::Min)
      acc = (acc.real() != 0 || v.real() != 0) ? 1 : 0;  // or
    else if (form == Form::Bool)
      acc = (acc.real() != 0 && v.real() != 0) ? 1 : 0;  // and
    else if (how == Reduce::Sum)
      acc += v;
    else if (how == Reduce::Max)
      acc = lessThan(form, acc, v) ? v : acc;
    else
      acc = lessThan(form, v, acc) ? v : acc;
  }
  return acc;
}

std::vector<uint8_t> bytesOf(const Dtype& d, int rank, size_t count) {
  std::vector<uint8_t> out(count * d.bytes);
  for (size_t i = 0; i < count; ++i)
    encode(d.form, d.bytes, valueOf(d.form, rank, i), out.data() + i * d.bytes);
  return out;
}

MPI_Op opFor(const Mpi& m, const Dtype& d, Reduce how) {
  const MPI_Op builtin[] = {m.sum, m.max, m.min};
  const MPI_Op half[] = {m.sumF16, m.maxF16, m.minF16};
  const MPI_Op brain[] = {m.sumBf16, m.maxBf16, m.minBf16};
  if (d.form == Form::F16) return half[int(how)];
  if (d.form == Form::Bf16) return brain[int(how)];
  if (d.form == Form::C64 && how != Reduce::Sum)
    return how == Reduce::Max ? m.maxC64 : m.minC64;
  return builtin[int(how)];
}

std::string firstDifference(const std::vector<uint8_t>& got,
                            const std::vector<uint8_t>& want, size_t bytes) {
  for (size_t at = 0; at < want.size(); ++at)
    if (got[at] != want[at])
      return "element " + std::to_string(at / bytes) + " differs (byte " +
             std::to_string(at % bytes) + ")";
  return "";
}

std::string checkAllReduce(Mpi& m, int rank, int size) {
  const char* names[] = {"all_sum", "all_max", "all_min"};
  for (const Dtype& d : dtypes(m))
    for (Reduce how : {Reduce::Sum, Reduce::Max, Reduce::Min})
      for (size_t count : {size_t(1), size_t(37), size_t(4099)})
        for (bool inPlace : {false, true}) {
          std::vector<uint8_t> in = bytesOf(d, rank, count);
          std::vector<uint8_t> out(in.size(), 0xee);
          std::vector<uint8_t> want(in.size());
          for (size_t i = 0; i < count; ++i)
            encode(d.form, d.bytes, reduceAll(d.form, how, size, i),
                   want.data() + i * d.bytes);
          if (inPlace) out = in;
          // MLX: MPI_IN_PLACE when the output took the input's buffer.
          m.allreduce(inPlace ? mcl::mpi::kInPlace : in.data(), out.data(),
                      int(count), d.handle, opFor(m, d, how), m.world);
          const std::string diff = firstDifference(out, want, d.bytes);
          if (!diff.empty())
            return std::string(names[int(how)]) + " of " + d.name + ", count " +
                   std::to_string(count) + (inPlace ? ", in place" : "") +
                   ": " + diff;
        }
  return "";
}

std::string checkAllGather(Mpi& m, int rank, int size) {
  for (const Dtype& d : dtypes(m)) {
    const size_t count = 37;
    std::vector<uint8_t> in = bytesOf(d, rank, count);
    std::vector<uint8_t> out(in.size() * size_t(size), 0xee), want;
    for (int r = 0; r < size; ++r) {
      std::vector<uint8_t> part = bytesOf(d, r, count);
      want.insert(want.end(), part.begin(), part.end());
    }
    m.allgather(in.data(), int(count), d.handle, out.data(), int(count),
                d.handle, m.world);
    const std::string diff = firstDifference(out, want, d.bytes);
    if (!diff.empty())
      return std::string("all_gather of ") + d.name + ": " + diff;
  }
  return "";
}

// mlx-lm's pipeline: each rank receives the previous rank's hidden row,
// sends its own on, then the last rank's result reaches all by all_gather.
std::string checkPipeline(Mpi& m, int rank, int size) {
  const Dtype row{"bfloat16", m.bfloat16, Form::Bf16, 2};
  const size_t hidden = 8192;
  std::vector<uint8_t> mine = bytesOf(row, rank, hidden);
  if (rank > 0) {
    std::vector<uint8_t> got(mine.size());
    MPI_Status status{};
    m.recv(got.data(), int(hidden), m.bfloat16, rank - 1, mcl::mpi::kAnyTag,
           m.world, &status);
    const std::string diff =
        firstDifference(got, bytesOf(row, rank - 1, hidden), 2);
    if (!diff.empty())
      return "recv from rank " + std::to_string(rank - 1) + ": " + diff;
    if (status.MPI_SOURCE != rank - 1 || status._ucount != mine.size())
      return "recv's status names source " + std::to_string(status.MPI_SOURCE) +
             " and " + std::to_string(status._ucount) + " bytes";
  }
  if (rank + 1 < size)
    m.send(mine.data(), int(hidden), m.bfloat16, rank + 1, 0, m.world);
  std::vector<uint8_t> all(mine.size() * size_t(size));
  m.allgather(mine.data(), int(hidden), m.bfloat16, all.data(), int(hidden),
              m.bfloat16, m.world);
  const std::string diff = firstDifference(
      std::vector<uint8_t>(all.end() - long(mine.size()), all.end()),
      bytesOf(row, size - 1, hidden), 2);
  return diff.empty() ? "" : "pipeline all_gather: " + diff;
}

// mlx-lm's tensor parallelism: two all_sums of one hidden row per layer per
// token (80 layers of a 70B model: 160 rows of 8192 bfloat16), in place;
// then a prefill of 2048 tokens in one message (32 MiB).
std::string checkTensorParallel(Mpi& m, int rank, int size) {
  const Dtype row{"bfloat16", m.bfloat16, Form::Bf16, 2};
  for (size_t tokens : {size_t(1), size_t(2048)}) {
    const size_t count = tokens * 8192;
    const int rows = tokens == 1 ? 160 : 1;
    std::vector<uint8_t> want(count * 2);
    for (size_t i = 0; i < count; ++i)
      encode(Form::Bf16, 2, reduceAll(Form::Bf16, Reduce::Sum, size, i),
             want.data() + i * 2);
    for (int r = 0; r < rows; ++r) {
      std::vector<uint8_t> x = bytesOf(row, rank, count);
      m.allreduce(mcl::mpi::kInPlace, x.data(), int(count), m.bfloat16,
                  m.sumBf16, m.world);
      const std::string diff = firstDifference(x, want, 2);
      if (!diff.empty())
        return "all_sum of " + std::to_string(tokens) +
               " bfloat16 rows: " + diff;
    }
  }
  return "";
}

// Group.split(color, key): key -1 is the rank, as MLX passes it.
std::string checkSplit(Mpi& m, int rank, int size) {
  for (bool reversed : {false, true}) {
    MPI_Comm half = nullptr;
    const int key = reversed ? size - rank : rank;
    if (m.comm_split(m.world, rank % 2, key, &half) != mcl::mpi::kSuccess)
      return "MPI_Comm_split failed";
    int subRank = -1, subSize = 0;
    m.comm_rank(half, &subRank);
    m.comm_size(half, &subSize);
    const int members = (size - rank % 2 + 1) / 2;
    const int wantRank = reversed ? members - 1 - rank / 2 : rank / 2;
    if (subSize != members || subRank != wantRank)
      return "split: rank " + std::to_string(subRank) + " of " +
             std::to_string(subSize) + ", expected " +
             std::to_string(wantRank) + " of " + std::to_string(members);
    int32_t sum = rank, want = 0;
    for (int r = rank % 2; r < size; r += 2) want += r;
    m.allreduce(mcl::mpi::kInPlace, &sum, 1, m.int32, m.sum, half);
    if (sum != want)
      return "all_sum on a split: " + std::to_string(sum) + ", expected " +
             std::to_string(want);
    m.comm_free(&half);
  }
  return "";
}

// Four messages of different shapes to the next rank in sequence, and
// four from the previous one (mlx #3149: back-to-back send/recv of
// different shapes). Even ranks send first; odd ranks receive first, so an
// odd ring cannot wait on itself.
std::string soakSendRecv(Mpi& m, int rank, int size, int round, long* calls) {
  const Dtype row{"bfloat16", m.bfloat16, Form::Bf16, 2};
  const size_t shapes[] = {1000, 16384, 77, 65536};
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  auto sendAll = [&] {
    for (size_t count : shapes) {
      std::vector<uint8_t> out = bytesOf(row, rank + 3 * round, count);
      m.send(out.data(), int(count), m.bfloat16, next, 0, m.world);
      ++*calls;
    }
  };
  auto recvAll = [&]() -> std::string {
    for (size_t count : shapes) {
      std::vector<uint8_t> got(count * 2);
      MPI_Status status{};
      m.recv(got.data(), int(count), m.bfloat16, prev, mcl::mpi::kAnyTag,
             m.world, &status);
      ++*calls;
      const std::string diff =
          firstDifference(got, bytesOf(row, prev + 3 * round, count), 2);
      if (!diff.empty())
        return "recv of " + std::to_string(count) + " bfloat16 from rank " +
               std::to_string(prev) + ": " + diff;
    }
    return "";
  };
  if (rank % 2 == 0) sendAll();
  std::string failure = recvAll();
  if (rank % 2 != 0) sendAll();
  return failure;
}

std::string soakRound(Mpi& m, int rank, int size, int round, long* calls) {
  const Dtype row{"bfloat16", m.bfloat16, Form::Bf16, 2};
  const size_t hidden = 8192;
  for (size_t tokens : {size_t(1), size_t(2048)}) {
    if (tokens > 1 && round % 8 != 7) continue;
    const size_t count = tokens * hidden;
    std::vector<uint8_t> want(count * 2);
    for (size_t i = 0; i < count; ++i)
      encode(Form::Bf16, 2, reduceAll(Form::Bf16, Reduce::Sum, size, i),
             want.data() + i * 2);
    for (int r = 0; r < (tokens == 1 ? 16 : 1); ++r) {
      std::vector<uint8_t> x = bytesOf(row, rank, count);
      m.allreduce(mcl::mpi::kInPlace, x.data(), int(count), m.bfloat16,
                  m.sumBf16, m.world);
      ++*calls;
      const std::string diff = firstDifference(x, want, 2);
      if (!diff.empty())
        return "all_sum of " + std::to_string(tokens) +
               " bfloat16 rows: " + diff;
    }
  }
  std::vector<uint8_t> mine = bytesOf(row, rank + round, hidden);
  std::vector<uint8_t> all(mine.size() * size_t(size));
  m.allgather(mine.data(), int(hidden), m.bfloat16, all.data(), int(hidden),
              m.bfloat16, m.world);
  ++*calls;
  for (int r = 0; r < size; ++r) {
    const std::vector<uint8_t> part(all.begin() + long(mine.size()) * r,
                                    all.begin() + long(mine.size()) * (r + 1));
    const std::string diff =
        firstDifference(part, bytesOf(row, r + round, hidden), 2);
    if (!diff.empty())
      return "all_gather, rank " + std::to_string(r) + "'s part: " + diff;
  }
  return soakSendRecv(m, rank, size, round, calls);
}

}  // namespace

std::string runSoak(Mpi& m, int rank, int size, int rounds, long* calls) {
  std::string failure;
  std::thread worker([&] {
    for (int round = 0; round < rounds && failure.empty(); ++round) {
      failure = soakRound(m, rank, size, round, calls);
      if (!failure.empty())
        failure = "round " + std::to_string(round) + ": " + failure;
    }
  });
  worker.join();
  return failure;
}

std::string runCalls(Mpi& m, int rank, int size) {
  std::string failure;
  std::thread worker([&] {
    for (const auto& check : {checkAllReduce, checkAllGather, checkPipeline,
                              checkTensorParallel, checkSplit}) {
      failure = check(m, rank, size);
      if (!failure.empty()) return;
    }
  });
  worker.join();
  return failure;
}

}  // namespace mlx_replay
