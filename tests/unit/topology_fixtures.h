// Shared by the topology parser tests: fixture loading and the check that a
// bad input gives mcl::Error(mclInvalidArgument) with a useful message.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <ios>
#include <sstream>
#include <string>

#include "base/error.h"
#include "build_paths.h"

namespace mcl::testing {

inline std::string fixturePath(const std::string& relative) {
  return mcl::testing::fixtureDir() + "/topology/" + relative;
}

inline std::string readFixture(const std::string& relative) {
  std::ifstream in(fixturePath(relative), std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << fixturePath(relative);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs f and expects mcl::Error(mclInvalidArgument) whose message contains
// every one of `mentions` (the file kind, the place, what is wrong).
inline void expectInvalid(const std::function<void()>& f,
                          const std::string& why,
                          std::initializer_list<const char*> mentions) {
  try {
    f();
    ADD_FAILURE() << why << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclInvalidArgument) << why << ": " << e.what();
    for (const char* m : mentions) {
      EXPECT_NE(std::string(e.what()).find(m), std::string::npos)
          << why << ": \"" << e.what() << "\" does not mention \"" << m << "\"";
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << why << ": threw a non-mcl exception: " << e.what();
  }
}

}  // namespace mcl::testing
