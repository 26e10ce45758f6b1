// Byte-level encoding of bootstrap messages: big-endian integers and
// length-prefixed strings, with a reader that checks every bound (these bytes
// come from the network and may come from a stranger).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mcl {

class WireWriter {
 public:
  void u8(uint8_t v) { bytes_.push_back(v); }
  void u32(uint32_t v);
  void u64(uint64_t v);
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void raw(const void* data, size_t n);
  void blob(const void* data, size_t n);  // u32 length + bytes
  void str(const std::string& s) { blob(s.data(), s.size()); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t> take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

// Throws mclRemoteError("malformed <what>: ...") on any overrun.
class WireReader {
 public:
  WireReader(const uint8_t* data, size_t size, const char* what)
      : p_(data), end_(data + size), what_(what) {}
  uint8_t u8();
  uint32_t u32();
  uint64_t u64();
  int32_t i32() { return static_cast<int32_t>(u32()); }
  void raw(void* out, size_t n);
  std::vector<uint8_t> blob(size_t maxBytes);
  std::string str(size_t maxBytes);
  // Bytes not yet read: bounds counts before anything is allocated.
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  // The message must be fully consumed.
  void finish();

 private:
  void need(size_t n);
  const uint8_t* p_;
  const uint8_t* end_;
  const char* what_;
};

}  // namespace mcl
