// A small command-line parser for iofleet's binaries: `--name=value`, `--name value`,
// repeatable options and positional arguments, with "did you mean" errors. (absl flags cannot
// repeat an option or take subcommands, both of which the CLI needs.)
#ifndef IOFLEET_COMMON_COMMAND_LINE_H_
#define IOFLEET_COMMON_COMMAND_LINE_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace iofleet {

struct OptionSpec {
  std::string name;        // without the leading "--"
  bool takes_value = true;
  bool repeatable = false;
  std::string value_name;  // for help, e.g. "HOST:PORT,..."
  std::string help;
};

class CommandLine {
 public:
  bool Has(const std::string& name) const { return values_.contains(name); }
  // The last value given for `name`, or `fallback`.
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  // Every value given for a repeatable option, in order.
  std::vector<std::string> GetAll(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  friend absl::StatusOr<CommandLine> ParseCommandLine(const std::vector<std::string>&,
                                                      const std::vector<OptionSpec>&);
  absl::flat_hash_map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

// Parses `args` (without the program name). Errors name the option and, for an unknown one,
// the nearest known option. "--" ends option parsing.
absl::StatusOr<CommandLine> ParseCommandLine(const std::vector<std::string>& args,
                                             const std::vector<OptionSpec>& specs);

// "  --name VALUE   help" lines for a usage message.
std::string FormatOptionHelp(const std::vector<OptionSpec>& specs);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_COMMAND_LINE_H_
