// FarewellScan: finding a peer's farewell behind pieces in what a broken
// TCP socket still holds, from wherever the reading stood.
#include "transports/tcp/farewell_scan.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace mcl::transport::tcp {
namespace {

constexpr uint32_t kSlotBytes = 64;

void append(std::vector<std::byte>& out, const void* data, size_t bytes) {
  const auto* p = static_cast<const std::byte*>(data);
  out.insert(out.end(), p, p + bytes);
}

void appendPiece(std::vector<std::byte>& out, uint32_t length, uint32_t piece) {
  const PieceHeader header{length, piece};
  append(out, &header, sizeof(header));
  out.insert(out.end(), length, std::byte{0x5a});
}

void appendFarewell(std::vector<std::byte>& out, const std::string& text) {
  const PieceHeader header{kFarewellLength, 0};
  append(out, &header, sizeof(header));
  std::vector<char> padded(kFarewellTextBytes, '\0');
  std::memcpy(padded.data(), text.data(), text.size());
  append(out, padded.data(), padded.size());
}

TEST(FarewellScan, FindsTheFarewellBehindWholePieces) {
  std::vector<std::byte> stream;
  appendPiece(stream, 10, 0);
  appendPiece(stream, kSlotBytes, 2);
  appendFarewell(stream, "rank 0/3 gave up: waiting for rank 1");
  FarewellScan scan = FarewellScan::inHeader({}, kSlotBytes);
  EXPECT_FALSE(scan.feed(stream));
  EXPECT_EQ(scan.farewell(), "rank 0/3 gave up: waiting for rank 1");
}

TEST(FarewellScan, FindsItFedOneByteAtATime) {
  std::vector<std::byte> stream;
  appendPiece(stream, 7, 0);
  appendFarewell(stream, "bye");
  FarewellScan scan = FarewellScan::inHeader({}, kSlotBytes);
  for (std::byte b : stream) scan.feed(std::span(&b, 1));
  EXPECT_FALSE(scan.wantsMore());
  EXPECT_EQ(scan.farewell(), "bye");
}

TEST(FarewellScan, StartsInsideAHeader) {
  std::vector<std::byte> stream;
  appendPiece(stream, 5, 4);
  appendFarewell(stream, "half a header read");
  FarewellScan scan =
      FarewellScan::inHeader(std::span(stream).first(3), kSlotBytes);
  scan.feed(std::span(stream).subspan(3));
  EXPECT_EQ(scan.farewell(), "half a header read");
}

TEST(FarewellScan, StartsInsideAPiece) {
  std::vector<std::byte> stream(20, std::byte{1});  // the piece's rest
  appendFarewell(stream, "after the piece");
  FarewellScan scan = FarewellScan::inPayload(20, kSlotBytes);
  scan.feed(stream);
  EXPECT_EQ(scan.farewell(), "after the piece");
}

TEST(FarewellScan, StartsInsideTheFarewellText) {
  std::vector<std::byte> text;
  appendFarewell(text, "begun before the break");
  text.erase(text.begin(), text.begin() + sizeof(PieceHeader));
  FarewellScan scan =
      FarewellScan::inFarewell(std::span(text).first(6), kSlotBytes);
  scan.feed(std::span(text).subspan(6));
  EXPECT_EQ(scan.farewell(), "begun before the break");
}

TEST(FarewellScan, TextCutShortByTheEndIsKept) {
  std::vector<std::byte> stream;
  appendFarewell(stream, "cut short here");
  FarewellScan scan = FarewellScan::inHeader({}, kSlotBytes);
  scan.feed(std::span(stream).first(sizeof(PieceHeader) + 8));
  EXPECT_TRUE(scan.wantsMore());
  EXPECT_EQ(scan.farewell(), "cut shor");
}

TEST(FarewellScan, AnEmptyTextStillSaysFarewell) {
  std::vector<std::byte> stream;
  appendFarewell(stream, "");
  FarewellScan scan = FarewellScan::inHeader({}, kSlotBytes);
  scan.feed(stream);
  EXPECT_EQ(scan.farewell(), "it said farewell");
}

TEST(FarewellScan, NoFarewellWhenThePeerSentOnlyPieces) {
  std::vector<std::byte> stream;
  appendPiece(stream, 3, 0);
  appendPiece(stream, 9, 2);
  FarewellScan scan = FarewellScan::inHeader({}, kSlotBytes);
  EXPECT_TRUE(scan.feed(stream));
  EXPECT_EQ(scan.farewell(), "");
}

TEST(FarewellScan, StopsAtAHeaderThatMakesNoSense) {
  for (uint32_t length : {0u, kSlotBytes + 1}) {
    std::vector<std::byte> stream;
    const PieceHeader bad{length, 0};
    append(stream, &bad, sizeof(bad));
    appendFarewell(stream, "never reached");  // what follows is no frame
    FarewellScan scan = FarewellScan::inHeader({}, kSlotBytes);
    EXPECT_FALSE(scan.feed(stream)) << length;
    EXPECT_EQ(scan.farewell(), "") << length;
  }
}

TEST(FarewellScan, UnderProtectionSkipsTagsAndKeepsTheFarewells) {
  constexpr size_t kTag = 16;
  std::vector<std::byte> stream;
  appendPiece(stream, 10, 0);
  stream.insert(stream.end(), kTag, std::byte{0x11});
  appendPiece(stream, kSlotBytes, 2);
  stream.insert(stream.end(), kTag, std::byte{0x22});
  appendFarewell(stream, "sealed");
  stream.insert(stream.end(), kTag, std::byte{0x33});
  FarewellScan scan = FarewellScan::inHeader({}, kSlotBytes, kTag);
  EXPECT_FALSE(scan.feed(stream));
  EXPECT_EQ(scan.farewell(), "sealed");
  EXPECT_EQ(scan.piecesPassed(), 2u);
  const std::span<const std::byte> frame = scan.sealedFrame();
  ASSERT_EQ(frame.size(), kFarewellTextBytes + kTag);
  for (std::byte b : frame.subspan(kFarewellTextBytes))
    EXPECT_EQ(b, std::byte{0x33});
}

TEST(FarewellScan, InsideAPiecesTagThatPieceCounts) {
  constexpr size_t kTag = 16;
  std::vector<std::byte> stream(5, std::byte{0});  // the rest of a tag
  appendFarewell(stream, "after a tag");
  stream.insert(stream.end(), kTag, std::byte{0x44});
  FarewellScan scan = FarewellScan::inPayload(5, kSlotBytes, kTag);
  scan.feed(stream);
  EXPECT_EQ(scan.farewell(), "after a tag");
  EXPECT_EQ(scan.piecesPassed(), 1u);
  EXPECT_EQ(scan.sealedFrame().size(), kFarewellTextBytes + kTag);
}

TEST(FarewellScan, AFarewellWithoutItsWholeTagHasNoSealedFrame) {
  constexpr size_t kTag = 16;
  std::vector<std::byte> stream;
  appendFarewell(stream, "tag cut short");
  stream.insert(stream.end(), kTag - 1, std::byte{0x55});
  FarewellScan scan = FarewellScan::inHeader({}, kSlotBytes, kTag);
  EXPECT_TRUE(scan.feed(stream));
  EXPECT_TRUE(scan.sealedFrame().empty());
}

}  // namespace
}  // namespace mcl::transport::tcp
