// Tests for MCL_SOCKET_IFNAME parsing (topology/ifname_filter.h), which
// follows NCCL's NCCL_SOCKET_IFNAME syntax: a comma-separated list of name
// prefixes, '^' to exclude, '=' for exact names, empty for everything.
#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <vector>

#include "base/error.h"
#include "topology/ifname_filter.h"

namespace mcl::topology {
namespace {

using Names = std::vector<std::string>;

// Interface names seen on macOS and Linux hosts.
const Names kAll = {"lo",   "lo0",   "en0",     "en2", "en20",   "eth0",
                    "eth1", "wlan0", "docker0", "br0", "bridge0"};

// The names in kAll that `spec` lets through.
Names passing(const std::string& spec) {
  IfnameFilter f = parseIfnameFilter(spec);
  Names out;
  for (const auto& n : kAll)
    if (f.matches(n)) out.push_back(n);
  return out;
}

TEST(IfnameFilterTest, EmptySpecMatchesEverything) {
  IfnameFilter f = parseIfnameFilter("");
  EXPECT_TRUE(f.empty());
  EXPECT_FALSE(f.exclude);
  EXPECT_FALSE(f.exact);
  EXPECT_EQ(passing(""), kAll);
  EXPECT_TRUE(f.matches(""));
}

TEST(IfnameFilterTest, DefaultFilterMatchesEverything) {
  IfnameFilter f;
  EXPECT_TRUE(f.empty());
  EXPECT_TRUE(f.matches("en0"));
  EXPECT_TRUE(f.matches("lo"));
}

TEST(IfnameFilterTest, PrefixList) {
  IfnameFilter f = parseIfnameFilter("en,eth");
  EXPECT_FALSE(f.exclude);
  EXPECT_FALSE(f.exact);
  EXPECT_EQ(f.names, Names({"en", "eth"}));
  EXPECT_TRUE(f.matches("en0"));
  EXPECT_TRUE(f.matches("eth1"));
  EXPECT_FALSE(f.matches("lo"));
  EXPECT_FALSE(f.matches("wlan0"));
  EXPECT_EQ(passing("en,eth"), Names({"en0", "en2", "en20", "eth0", "eth1"}));
}

TEST(IfnameFilterTest, PrefixIsAnchoredAtTheStart) {
  IfnameFilter f = parseIfnameFilter("en");
  EXPECT_FALSE(f.matches("ven0"));
  EXPECT_FALSE(f.matches("e"));
  EXPECT_TRUE(f.matches("en"));
}

TEST(IfnameFilterTest, SingleFullNameIsStillAPrefix) {
  EXPECT_EQ(passing("en2"), Names({"en2", "en20"}));
}

TEST(IfnameFilterTest, CaretExcludesPrefixes) {
  IfnameFilter f = parseIfnameFilter("^docker,lo");
  EXPECT_TRUE(f.exclude);
  EXPECT_FALSE(f.exact);
  EXPECT_EQ(f.names, Names({"docker", "lo"}));
  EXPECT_FALSE(f.matches("docker0"));
  EXPECT_FALSE(f.matches("lo"));
  EXPECT_FALSE(f.matches("lo0"));
  EXPECT_TRUE(f.matches("en0"));
  EXPECT_TRUE(f.matches("eth0"));
  EXPECT_EQ(passing("^docker,lo"), Names({"en0", "en2", "en20", "eth0", "eth1",
                                          "wlan0", "br0", "bridge0"}));
}

TEST(IfnameFilterTest, EqualsMatchesExactly) {
  IfnameFilter f = parseIfnameFilter("=en2");
  EXPECT_FALSE(f.exclude);
  EXPECT_TRUE(f.exact);
  EXPECT_EQ(f.names, Names({"en2"}));
  EXPECT_TRUE(f.matches("en2"));
  EXPECT_FALSE(f.matches("en20"));
  EXPECT_FALSE(f.matches("en"));
  EXPECT_EQ(passing("=en2"), Names({"en2"}));
}

TEST(IfnameFilterTest, EqualsAppliesToEveryName) {
  EXPECT_EQ(passing("=en2,eth0"), Names({"en2", "eth0"}));
  EXPECT_EQ(passing("=en,eth"), Names({}));
}

TEST(IfnameFilterTest, CaretEqualsExcludesExactly) {
  IfnameFilter f = parseIfnameFilter("^=en0");
  EXPECT_TRUE(f.exclude);
  EXPECT_TRUE(f.exact);
  EXPECT_EQ(f.names, Names({"en0"}));
  EXPECT_FALSE(f.matches("en0"));
  EXPECT_TRUE(f.matches("en00"));
  EXPECT_TRUE(f.matches("en2"));
  EXPECT_TRUE(f.matches("lo"));
}

TEST(IfnameFilterTest, SpacesAroundNamesAreIgnored) {
  EXPECT_EQ(parseIfnameFilter(" en , eth ").names, Names({"en", "eth"}));
  EXPECT_EQ(passing(" en , eth "), passing("en,eth"));
  EXPECT_EQ(parseIfnameFilter("^ docker ,  lo").names, Names({"docker", "lo"}));
  EXPECT_EQ(passing("^ docker ,  lo"), passing("^docker,lo"));
  IfnameFilter exact = parseIfnameFilter("= en2 ");
  EXPECT_TRUE(exact.exact);
  EXPECT_EQ(exact.names, Names({"en2"}));
  EXPECT_TRUE(exact.matches("en2"));
  EXPECT_FALSE(exact.matches("en20"));
}

TEST(IfnameFilterTest, EmptyListEntriesAreSkipped) {
  EXPECT_EQ(parseIfnameFilter("en,,eth,").names, Names({"en", "eth"}));
  EXPECT_EQ(parseIfnameFilter(",en").names, Names({"en"}));
  EXPECT_EQ(parseIfnameFilter("^,lo").names, Names({"lo"}));
}

class IfnameFilterNamesNothingTest
    : public ::testing::TestWithParam<std::string> {};

TEST_P(IfnameFilterNamesNothingTest, ThrowsInvalidArgument) {
  const std::string spec = GetParam();
  try {
    parseIfnameFilter(spec);
    ADD_FAILURE() << "'" << spec << "' parsed without error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("MCL_SOCKET_IFNAME"),
              std::string::npos)
        << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "'" << spec << "' threw a non-mcl exception: " << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Specs, IfnameFilterNamesNothingTest,
    ::testing::Values("^", "=", ",", "^=", ",,", "^,", "=,", " ", "^ , "),
    [](const ::testing::TestParamInfo<std::string>& param) {
      std::string out;
      for (char c : param.param) {
        if (c == '^') out += "Caret";
        if (c == '=') out += "Equals";
        if (c == ',') out += "Comma";
        if (c == ' ') out += "Space";
      }
      return out + std::to_string(param.index);
    });

}  // namespace
}  // namespace mcl::topology
