#include "controller/flame_graph.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace iofleet {
namespace {

constexpr double kWidth = 1200, kFrameHeight = 16, kTop = 40, kSide = 10, kMinFramePx = 0.1;

struct Node {
  uint64_t value = 0;   // samples in this frame and above it (the profile drawn)
  uint64_t before = 0;  // the same in the earlier profile (differential)
  std::map<std::string, std::unique_ptr<Node>> children;
};

void Add(Node* root, const std::string& stack, uint64_t count, bool before) {
  Node* node = root;
  (before ? node->before : node->value) += count;
  for (absl::string_view frame : absl::StrSplit(stack, ';')) {
    std::unique_ptr<Node>& child = node->children[std::string(frame)];
    if (!child) child = std::make_unique<Node>();
    node = child.get();
    (before ? node->before : node->value) += count;
  }
}

int Depth(const Node& node) {
  int depth = 0;
  for (const auto& [name, child] : node.children) depth = std::max(depth, 1 + Depth(*child));
  return depth;
}

std::string Escape(absl::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20) out += c;
    }
  }
  return out;
}

// flamegraph.pl's "hot" palette, stable per name.
std::string HotColour(absl::string_view name) {
  uint32_t h = 2166136261u;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return absl::StrFormat("rgb(%d,%d,%d)", 205 + static_cast<int>(h % 50), static_cast<int>((h >> 8) % 230), static_cast<int>((h >> 16) % 55));
}

// Red for a share that grew, blue for one that shrank, white for none; `change` in [-1, 1].
std::string DiffColour(double change) {
  const int fade = static_cast<int>(std::lround(255 * (1 - std::min(1.0, std::fabs(change)))));
  return change >= 0 ? absl::StrFormat("rgb(255,%d,%d)", fade, fade) : absl::StrFormat("rgb(%d,%d,255)", fade, fade);
}

struct Canvas {
  std::string svg;
  double height;
  uint64_t total, total_before;
  bool differential;
  double max_change;
};

void Draw(Canvas& canvas, const std::string& name, const Node& node, double x, int depth) {
  const double width = (kWidth - 2 * kSide) * static_cast<double>(node.value) / static_cast<double>(canvas.total);
  if (width < kMinFramePx) return;
  const double y = canvas.height - kFrameHeight * (depth + 1) - 20;
  const double share = 100.0 * static_cast<double>(node.value) / static_cast<double>(canvas.total);
  std::string tooltip = absl::StrFormat("%s (%d samples, %.2f%%)", name, node.value, share);
  std::string colour = HotColour(name);
  if (canvas.differential) {
    const double before = canvas.total_before ? 100.0 * static_cast<double>(node.before) / static_cast<double>(canvas.total_before) : 0;
    absl::StrAppend(&tooltip, absl::StrFormat(", before %.2f%% (%+.2f)", before, share - before));
    colour = DiffColour(canvas.max_change > 0 ? (share - before) / canvas.max_change : 0);
  }
  absl::StrAppendFormat(&canvas.svg, "<g><title>%s</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" rx=\"2\"/>", Escape(tooltip),
                        x, y, width, kFrameHeight - 1, colour);
  const size_t fits = static_cast<size_t>(std::max(0.0, (width - 6) / 7));
  if (fits >= 3) {
    const std::string label = name.size() <= fits ? name : name.substr(0, fits - 2) + "..";
    absl::StrAppendFormat(&canvas.svg, "<text x=\"%.1f\" y=\"%.1f\">%s</text>", x + 3, y + 11.5, Escape(label));
  }
  canvas.svg += "</g>\n";
  double child_x = x;
  for (const auto& [child_name, child] : node.children) {
    Draw(canvas, child_name, *child, child_x, depth + 1);
    child_x += (kWidth - 2 * kSide) * static_cast<double>(child->value) / static_cast<double>(canvas.total);
  }
}

double MaxChange(const Node& node, uint64_t total, uint64_t total_before) {
  const double share = total ? static_cast<double>(node.value) / static_cast<double>(total) : 0;
  const double before = total_before ? static_cast<double>(node.before) / static_cast<double>(total_before) : 0;
  double m = 100 * std::fabs(share - before);
  for (const auto& [name, child] : node.children) m = std::max(m, MaxChange(*child, total, total_before));
  return m;
}

std::string Render(const std::string& title, const Node& root, bool differential) {
  Canvas canvas;
  canvas.total = std::max<uint64_t>(root.value, 1);
  canvas.total_before = root.before;
  canvas.differential = differential;
  canvas.max_change = differential ? MaxChange(root, root.value, root.before) : 0;
  const int depth = Depth(root);
  canvas.height = kTop + kFrameHeight * (depth + 1) + 30;
  canvas.svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"Verdana,sans-serif\" "
      "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n<text x=\"%d\" y=\"24\" font-size=\"17\" text-anchor=\"middle\">%s</text>\n"
      "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#555\">%d samples%s; hover a frame for its share</text>\n",
      static_cast<int>(kWidth), static_cast<int>(canvas.height), static_cast<int>(kWidth), static_cast<int>(canvas.height),
      static_cast<int>(kWidth / 2), Escape(title), static_cast<int>(kSide), static_cast<int>(canvas.height - 8), root.value,
      differential ? absl::StrFormat(" (before: %d); red: a larger share than before, blue: a smaller one", root.before) : "");
  if (root.value > 0) Draw(canvas, "all", root, kSide, 0);
  canvas.svg += "</svg>\n";
  return canvas.svg;
}

}  // namespace

std::string FlameGraphSvg(const std::string& title, const FoldedStacks& stacks) {
  Node root;
  for (const auto& [stack, count] : stacks) Add(&root, stack, count, false);
  return Render(title, root, false);
}

std::string DifferentialFlameGraphSvg(const std::string& title, const FoldedStacks& before, const FoldedStacks& after) {
  Node root;
  for (const auto& [stack, count] : after) Add(&root, stack, count, false);
  for (const auto& [stack, count] : before) Add(&root, stack, count, true);
  return Render(title, root, true);
}

}  // namespace iofleet
