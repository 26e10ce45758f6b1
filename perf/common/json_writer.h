// A small JSON writer: objects, arrays, strings (escaped, invalid UTF-8
// replaced by U+FFFD), integers, doubles (shortest form that reads back
// exactly; NaN and infinities become null), booleans and null. Indents two
// spaces per level.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mcl::perf {

class JsonWriter {
 public:
  void beginObject();
  void endObject();
  void beginArray();
  void endArray();
  // The next value's key; only inside an object.
  void key(std::string_view name);

  void string(std::string_view value);
  void integer(int64_t value);
  void unsignedInteger(uint64_t value);
  void number(double value);
  void boolean(bool value);
  void null();
  // A whole JSON value written elsewhere (valid JSON, on one line), as is.
  void verbatim(std::string_view json);

  // The document so far, ending with a newline once the outermost value
  // is closed.
  const std::string& text() const { return out_; }

 private:
  void beforeValue();
  void open(char bracket);
  void close(char bracket);
  void newline();

  std::string out_;
  std::vector<bool> empty_;  // per open container: nothing written yet
  bool afterKey_ = false;
};

// value as a JSON string literal, quotes included.
std::string jsonQuote(std::string_view value);

}  // namespace mcl::perf
