#include "common/command_line.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::vector<OptionSpec> kSpecs = {
    {"hosts", true, false, "LIST", ""},
    {"allow-root", true, true, "DIR", ""},
    {"verbose", false, false, "", ""},
};

TEST(CommandLine, ValuesRepeatsAndPositionals) {
  auto cl = ParseCommandLine({"job.fio", "--hosts=a:1,b:2", "--allow-root", "/x",
                              "--allow-root=/y", "--verbose"},
                             kSpecs);
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_EQ(cl->Get("hosts"), "a:1,b:2");
  EXPECT_THAT(cl->GetAll("allow-root"), ElementsAre("/x", "/y"));
  EXPECT_TRUE(cl->Has("verbose"));
  EXPECT_THAT(cl->positional(), ElementsAre("job.fio"));
}

TEST(CommandLine, UnknownOptionSuggestsNearest) {
  auto cl = ParseCommandLine({"--hsts=a"}, kSpecs);
  ASSERT_FALSE(cl.ok());
  EXPECT_THAT(std::string(cl.status().message()),
              HasSubstr("unknown option --hsts (did you mean --hosts?)"));
}

TEST(CommandLine, MissingValueAndRepeatsAreErrors) {
  EXPECT_THAT(std::string(ParseCommandLine({"--hosts"}, kSpecs).status().message()),
              HasSubstr("--hosts needs a value"));
  EXPECT_THAT(std::string(ParseCommandLine({"--hosts=a", "--hosts=b"}, kSpecs).status().message()),
              HasSubstr("more than once"));
  EXPECT_FALSE(ParseCommandLine({"--verbose=1"}, kSpecs).ok());
  EXPECT_FALSE(ParseCommandLine({"-x"}, kSpecs).ok());
}

}  // namespace
}  // namespace iofleet
