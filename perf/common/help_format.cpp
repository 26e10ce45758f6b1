#include "common/help_format.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstddef>
#include <string>

namespace mcl::perf {

namespace {

constexpr size_t kFlagColumn = 30;

}  // namespace

std::string wrap(const std::string& text, size_t width) {
  std::string out;
  size_t lineLength = 0;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find_first_of(" \n", start), text.size());
    const std::string word = text.substr(start, end - start);
    if (lineLength > 0 && lineLength + 1 + word.size() > width) {
      out += '\n';
      lineLength = 0;
    } else if (lineLength > 0) {
      out += ' ';
      ++lineLength;
    }
    out += word;
    lineLength += word.size();
    if (end < text.size() && text[end] == '\n') {
      out += '\n';
      lineLength = 0;
    }
    start = end + 1;
  }
  return out;
}

WrappingFormatter::WrappingFormatter() { column_width(kFlagColumn); }

std::string WrappingFormatter::make_option_desc(const CLI::Option* opt) const {
  return wrap(opt->get_description(), kHelpWidth - kFlagColumn);
}

}  // namespace mcl::perf
