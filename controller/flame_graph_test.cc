#include "controller/flame_graph.h"

#include <regex>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

// The rectangles drawn: title text -> width.
std::map<std::string, double> Frames(const std::string& svg) {
  std::map<std::string, double> frames;
  const std::regex frame("<title>([^<]*)</title><rect x=\"[0-9.]+\" y=\"[0-9.]+\" width=\"([0-9.]+)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), frame); it != std::sregex_iterator(); ++it) {
    frames[(*it)[1]] = std::stod((*it)[2]);
  }
  return frames;
}

TEST(FlameGraph, FramesAreAsWideAsTheirShareAndNamedInTheirTooltips) {
  const std::string svg = FlameGraphSvg("host a", {{"io-job;RunJobThread;io_uring_enter", 30}, {"io-job;RunJobThread;pread64", 10}, {"swapper;idle", 60}});
  EXPECT_THAT(svg, ::testing::StartsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(svg, ::testing::EndsWith("</svg>\n"));
  const std::map<std::string, double> frames = Frames(svg);
  ASSERT_TRUE(frames.count("all (100 samples, 100.00%)"));
  ASSERT_TRUE(frames.count("io-job (40 samples, 40.00%)"));
  ASSERT_TRUE(frames.count("io_uring_enter (30 samples, 30.00%)"));
  ASSERT_TRUE(frames.count("swapper (60 samples, 60.00%)"));
  EXPECT_NEAR(frames.at("io-job (40 samples, 40.00%)") / frames.at("all (100 samples, 100.00%)"), 0.40, 0.001);
  EXPECT_NEAR(frames.at("io_uring_enter (30 samples, 30.00%)") / frames.at("all (100 samples, 100.00%)"), 0.30, 0.001);
}

TEST(FlameGraph, EscapesWhatWouldBreakTheSvg) {
  const std::string svg = FlameGraphSvg("<t>", {{"std::vector<int>::push_back&", 1}});
  EXPECT_THAT(svg, ::testing::HasSubstr("std::vector&lt;int&gt;::push_back&amp;"));
  EXPECT_THAT(svg, ::testing::Not(::testing::HasSubstr("<int>")));
}

TEST(FlameGraph, DifferentialColoursWhatGrewRedAndWhatShrankBlue) {
  const std::string svg = DifferentialFlameGraphSvg("a vs b", {{"io;kyber_dispatch", 10}, {"io;submit", 90}}, {{"io;kyber_dispatch", 50}, {"io;submit", 50}});
  EXPECT_THAT(svg, ::testing::HasSubstr("kyber_dispatch (50 samples, 50.00%), before 10.00% (+40.00)"));
  EXPECT_THAT(svg, ::testing::HasSubstr("submit (50 samples, 50.00%), before 90.00% (-40.00)"));
  // The largest change gets the full colour.
  EXPECT_THAT(svg, ::testing::ContainsRegex("kyber_dispatch[^<]*</title><rect[^>]*fill=\"rgb\\(255,0,0\\)\""));
  EXPECT_THAT(svg, ::testing::ContainsRegex("submit \\([^<]*</title><rect[^>]*fill=\"rgb\\(0,0,255\\)\""));
}

TEST(FlameGraph, AnEmptyProfileIsStillAValidSvg) {
  const std::string svg = FlameGraphSvg("nothing", {});
  EXPECT_THAT(svg, ::testing::HasSubstr("0 samples"));
  EXPECT_THAT(svg, ::testing::EndsWith("</svg>\n"));
}

}  // namespace
}  // namespace iofleet
