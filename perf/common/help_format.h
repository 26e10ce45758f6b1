// How mcl-perf's --help texts look: 80 columns, each flag's text wrapped
// beside the flags' column (CLI11 does not wrap).
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>

namespace mcl::perf {

constexpr size_t kHelpWidth = 80;

// Breaks each line of text into lines of at most width characters, at
// spaces.
std::string wrap(const std::string& text, size_t width = kHelpWidth);

// CLI11's formatter with the flags' texts wrapped (CLI11 indents what
// follows a newline).
class WrappingFormatter : public CLI::Formatter {
 public:
  WrappingFormatter();
  std::string make_option_desc(const CLI::Option* opt) const override;
};

}  // namespace mcl::perf
