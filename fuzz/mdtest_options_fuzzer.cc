// libFuzzer target: any words as mdtest's command line must parse or fail cleanly.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "controller/mdtest_options.h"
#include "job/mdtest_tree.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args = absl::StrSplit(text, absl::ByAnyChar(" \n\t"), absl::SkipEmpty());
  iofleet::MdtestOptions options;
  if (iofleet::ParseMdtestArgs(args, &options).ok()) {
    iofleet::MdtestTree tree(options.phase);  // the layout of whatever parsed
    (void)tree.items_per_task();
  }
  return 0;
}
