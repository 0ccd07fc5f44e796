// Flame graphs of folded stacks (--profile), as self-contained SVG: flamegraph.pl's layout —
// the root at the bottom, each frame as wide as its share of the samples, children in name
// order, narrow frames left out — with a tooltip (<title>) per frame, no script and no external
// reference, so an HTML report can inline it and any browser shows it. Differential graphs
// (difffolded.pl's idea): widths from the second profile, colour from how each frame's share of
// the samples changed from the first (red: more, blue: less).
//
// Written here rather than taken from a library: Debian has no flame-graph renderer for C++,
// and inferno (Rust) needs a toolchain newer than Debian 12's. It is small and tested.
#ifndef IOFLEET_CONTROLLER_FLAME_GRAPH_H_
#define IOFLEET_CONTROLLER_FLAME_GRAPH_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace iofleet {

using FoldedStacks = std::vector<std::pair<std::string, uint64_t>>;  // "a;b;c" -> samples

std::string FlameGraphSvg(const std::string& title, const FoldedStacks& stacks);
std::string DifferentialFlameGraphSvg(const std::string& title, const FoldedStacks& before, const FoldedStacks& after);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_FLAME_GRAPH_H_
