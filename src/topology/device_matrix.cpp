#include "topology/device_matrix.h"

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "topology/json_input.h"

namespace mcl::topology {

namespace {

constexpr const char* kMatrixKind = "device matrix";

// A real cluster is a handful of directly cabled Macs; this only stops a
// corrupt file from asking for a huge allocation.
constexpr size_t kMaxRanks = 4096;

std::string checkedName(const nlohmann::json& name, size_t i, size_t j) {
  if (!name.is_string()) {
    throw error(mclInvalidArgument,
                "%s: row %zu, column %zu: a device name should be a string, "
                "not %s",
                kMatrixKind, i, j, jsonTypeName(name));
  }
  std::string s = name.get<std::string>();
  if (s.empty()) {
    throw error(mclInvalidArgument,
                "%s: row %zu, column %zu: empty device name", kMatrixKind, i,
                j);
  }
  return s;
}

std::vector<std::string> parseCell(const nlohmann::json& cell, size_t i,
                                   size_t j) {
  std::vector<std::string> names;
  if (cell.is_null()) return names;
  if (i == j) {
    throw error(mclInvalidArgument,
                "%s: row %zu, column %zu: a rank has no cable to itself; "
                "the diagonal must be null",
                kMatrixKind, i, j);
  }
  if (cell.is_string()) {
    names.push_back(checkedName(cell, i, j));
  } else if (cell.is_array()) {
    for (const auto& name : cell) names.push_back(checkedName(name, i, j));
  } else {
    throw error(mclInvalidArgument,
                "%s: row %zu, column %zu: expected null, a device name or a "
                "list of names, not %s",
                kMatrixKind, i, j, jsonTypeName(cell));
  }
  return names;
}

}  // namespace

DeviceMatrix parseDeviceMatrix(std::string_view json) {
  nlohmann::json doc = parseJsonInput(json, kMatrixKind);
  if (!doc.is_array() || doc.empty()) {
    throw error(mclInvalidArgument,
                "%s: expected a non-empty list of rows, got %s%s", kMatrixKind,
                jsonTypeName(doc), doc.is_array() ? " (empty)" : "");
  }
  size_t n = doc.size();
  if (n > kMaxRanks) {
    throw error(mclInvalidArgument, "%s: %zu rows is more than %zu",
                kMatrixKind, n, kMaxRanks);
  }
  DeviceMatrix m;
  m.ranks = static_cast<int>(n);
  m.devices.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const auto& row = doc[i];
    if (!row.is_array()) {
      throw error(mclInvalidArgument, "%s: row %zu should be a list, not %s",
                  kMatrixKind, i, jsonTypeName(row));
    }
    if (row.size() != n) {
      throw error(mclInvalidArgument,
                  "%s: row %zu has %zu cells but there are %zu rows; the "
                  "matrix must be square",
                  kMatrixKind, i, row.size(), n);
    }
    std::set<std::string> used;
    for (size_t j = 0; j < n; ++j) {
      m.devices[i].push_back(parseCell(row[j], i, j));
      for (const auto& name : m.devices[i][j]) {
        if (!used.insert(name).second) {
          throw error(mclInvalidArgument,
                      "%s: row %zu, column %zu: device %s is already used in "
                      "this row; one device is one cable",
                      kMatrixKind, i, j, name.c_str());
        }
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      if (m.devices[i][j].size() != m.devices[j][i].size()) {
        throw error(mclInvalidArgument,
                    "%s: row %zu, column %zu lists %zu cable(s) but row %zu, "
                    "column %zu lists %zu; both ends must agree",
                    kMatrixKind, i, j, m.devices[i][j].size(), j, i,
                    m.devices[j][i].size());
      }
    }
  }
  return m;
}

}  // namespace mcl::topology
