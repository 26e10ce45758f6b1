#include "base/wire.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"

namespace mcl {

void WireWriter::u32(uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    bytes_.push_back(static_cast<uint8_t>(v >> shift));
}

void WireWriter::u64(uint64_t v) {
  u32(static_cast<uint32_t>(v >> 32));
  u32(static_cast<uint32_t>(v));
}

void WireWriter::raw(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  bytes_.insert(bytes_.end(), p, p + n);
}

void WireWriter::blob(const void* data, size_t n) {
  u32(static_cast<uint32_t>(n));
  raw(data, n);
}

void WireReader::need(size_t n) {
  if (static_cast<size_t>(end_ - p_) < n)
    throw error(mclRemoteError, "malformed %s: truncated", what_);
}

uint8_t WireReader::u8() {
  need(1);
  return *p_++;
}

uint32_t WireReader::u32() {
  need(4);
  uint32_t v = (uint32_t{p_[0]} << 24) | (uint32_t{p_[1]} << 16) |
               (uint32_t{p_[2]} << 8) | uint32_t{p_[3]};
  p_ += 4;
  return v;
}

uint64_t WireReader::u64() {
  uint64_t hi = u32();
  return (hi << 32) | u32();
}

void WireReader::raw(void* out, size_t n) {
  need(n);
  memcpy(out, p_, n);
  p_ += n;
}

std::vector<uint8_t> WireReader::blob(size_t maxBytes) {
  uint32_t n = u32();
  if (n > maxBytes)
    throw error(mclRemoteError, "malformed %s: field of %u bytes exceeds %zu",
                what_, n, maxBytes);
  need(n);
  std::vector<uint8_t> v(p_, p_ + n);
  p_ += n;
  return v;
}

std::string WireReader::str(size_t maxBytes) {
  std::vector<uint8_t> b = blob(maxBytes);
  return std::string(b.begin(), b.end());
}

void WireReader::finish() {
  if (p_ != end_)
    throw error(mclRemoteError, "malformed %s: %zu trailing bytes", what_,
                static_cast<size_t>(end_ - p_));
}

}  // namespace mcl
