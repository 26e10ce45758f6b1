// MLX JACCL device-matrix JSON (topology/device_matrix.h) on the fixtures
// in tests/fixtures/topology/device_matrix.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "topology/device_matrix.h"
#include "topology_fixtures.h"

namespace mcl::topology {
namespace {

using mcl::testing::expectInvalid;
using mcl::testing::readFixture;
using Names = std::vector<std::string>;

TEST(DeviceMatrixTest, MeshOfFour) {
  DeviceMatrix m = parseDeviceMatrix(readFixture("device_matrix/mesh4.json"));
  ASSERT_EQ(m.ranks, 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(m.cableCount(i, i), 0);
    for (int j = 0; j < 4; ++j) {
      if (i != j) {
        EXPECT_EQ(m.cableCount(i, j), 1) << i << "," << j;
      }
    }
  }
  EXPECT_EQ(m.devices[0][3], Names{"rdma_en4"});
  EXPECT_EQ(m.devices[3][1], Names{"rdma_en5"});
}

TEST(DeviceMatrixTest, DoubledPairKeepsCableOrderPerSide) {
  DeviceMatrix m =
      parseDeviceMatrix(readFixture("device_matrix/doubled_pair.json"));
  ASSERT_EQ(m.ranks, 3);
  EXPECT_EQ(m.cableCount(0, 1), 2);
  EXPECT_EQ(m.cableCount(1, 0), 2);
  // The k-th cable is the k-th name on each side.
  EXPECT_EQ(m.devices[0][1], (Names{"rdma_en2", "rdma_en5"}));
  EXPECT_EQ(m.devices[1][0], (Names{"rdma_en4", "rdma_en2"}));
  // A one-element list is one cable, like a plain name.
  EXPECT_EQ(m.devices[2][1], Names{"rdma_en4"});
  EXPECT_EQ(m.devices[1][2], Names{"rdma_en3"});
}

TEST(DeviceMatrixTest, SingleRank) {
  DeviceMatrix m = parseDeviceMatrix("[[null]]");
  EXPECT_EQ(m.ranks, 1);
  EXPECT_EQ(m.cableCount(0, 0), 0);
}

TEST(DeviceMatrixTest, NullOffTheDiagonalIsNoCable) {
  DeviceMatrix m = parseDeviceMatrix(
      R"([[null, "rdma_en2", null], ["rdma_en2", null, "rdma_en3"],
          [null, "rdma_en3", null]])");
  EXPECT_EQ(m.cableCount(0, 2), 0);
  EXPECT_EQ(m.cableCount(2, 0), 0);
}

struct BadMatrix {
  const char* file;
  const char* mention;
};

class DeviceMatrixMalformedTest : public ::testing::TestWithParam<BadMatrix> {};

TEST_P(DeviceMatrixMalformedTest, GivesInvalidArgumentNamingRowAndColumn) {
  std::string text =
      readFixture(std::string("device_matrix/") + GetParam().file);
  expectInvalid([&] { parseDeviceMatrix(text); }, GetParam().file,
                {"device matrix", GetParam().mention});
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, DeviceMatrixMalformedTest,
    ::testing::Values(
        BadMatrix{"asymmetric.json",
                  "row 0, column 1 lists 2 cable(s) but row 1, column 0 lists "
                  "1"},
        BadMatrix{"non_square.json", "row 1 has 2 cells but there are 3 rows"},
        BadMatrix{"diagonal_not_null.json", "row 1, column 1"},
        BadMatrix{"empty_name.json", "row 1, column 2: empty device name"},
        BadMatrix{"cell_is_number.json", "row 0, column 1: expected null"},
        BadMatrix{"device_used_twice.json",
                  "row 0, column 2: device rdma_en2 is already used"},
        BadMatrix{"truncated.json", "cut short"},
        BadMatrix{"not_a_list.json", "expected a non-empty list of rows"}));

TEST(DeviceMatrixTest, OtherBadShapes) {
  expectInvalid([] { parseDeviceMatrix("[]"); }, "empty",
                {"device matrix", "(empty)"});
  expectInvalid([] { parseDeviceMatrix(R"([[null, "a"], "b"])"); },
                "row not a list", {"device matrix", "row 1 should be a list"});
  expectInvalid([] { parseDeviceMatrix(R"([[null, [7]], ["a", null]])"); },
                "name not a string",
                {"device matrix", "row 0, column 1", "should be a string"});
  expectInvalid([] { parseDeviceMatrix(""); }, "no text",
                {"device matrix", "the text is empty"});
}

}  // namespace
}  // namespace mcl::topology
