#include "common/command_line.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/nearest_name.h"

namespace iofleet {

std::string CommandLine::Get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() || it->second.empty() ? fallback : it->second.back();
}

std::vector<std::string> CommandLine::GetAll(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

absl::StatusOr<CommandLine> ParseCommandLine(const std::vector<std::string>& args,
                                             const std::vector<OptionSpec>& specs) {
  CommandLine result;
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (options_done || arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      if (arg == "--") {
        options_done = true;
        continue;
      }
      if (!options_done && arg.size() > 1 && arg[0] == '-' && arg != "-") {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown option ", arg, ": options are spelt --name or --name=value"));
      }
      result.positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::string value;
    bool has_inline_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_inline_value = true;
    }
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : specs) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) {
      std::vector<std::string> names;
      for (const OptionSpec& s : specs) names.push_back(s.name);
      return absl::InvalidArgumentError(
          absl::StrCat("unknown option --", name, DidYouMean(name, names, "--")));
    }
    if (spec->takes_value && !has_inline_value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("option --", name, " needs a value (",
                                                       spec->value_name, ")"));
      }
      value = args[++i];
    } else if (!spec->takes_value && has_inline_value) {
      return absl::InvalidArgumentError(absl::StrCat("option --", name, " takes no value"));
    }
    auto& slot = result.values_[name];
    if (!spec->repeatable && !slot.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("option --", name, " given more than once"));
    }
    slot.push_back(value);
  }
  return result;
}

std::string FormatOptionHelp(const std::vector<OptionSpec>& specs) {
  std::string out;
  for (const OptionSpec& s : specs) {
    std::string left = absl::StrCat("--", s.name, s.takes_value ? " " + s.value_name : "");
    absl::StrAppendFormat(&out, "  %-28s %s\n", left, s.help);
  }
  return out;
}

}  // namespace iofleet
