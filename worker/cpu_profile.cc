#include "worker/cpu_profile.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/errno_status.h"

extern char** environ;

namespace iofleet {
namespace {

constexpr size_t kMaxFrame = 256;

std::string PerfBinary() {
  const char* perf = std::getenv("IOFLEET_PERF");
  return perf && *perf ? perf : "perf";
}

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Starts `argv` with stdout and stderr into `log`; its pid.
absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // perf must see SIGINT (it writes its data then): not blocked or ignored as the worker's own
  // signal handling may have them.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int error = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) return ErrnoStatus(error, absl::StrCat("--profile: starting ", argv[0]));
  return pid;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The last lines of a perf log, for an error.
std::string Tail(const std::string& text) {
  std::string t(absl::StripAsciiWhitespace(text));
  return t.size() > 400 ? "..." + t.substr(t.size() - 400) : t;
}

// SIGINT (perf writes its data and exits), then waits up to `seconds`, then SIGKILL. Exit status.
int Interrupt(pid_t pid, double seconds) {
  if (pid <= 0) return -1;
  ::kill(pid, SIGINT);
  int status = 0;
  const double deadline = NowSeconds() + seconds;
  while (NowSeconds() < deadline) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

}  // namespace

std::map<std::pair<uint32_t, std::string>, uint64_t> FoldPerfScript(std::istream& in) {
  std::map<std::pair<uint32_t, std::string>, uint64_t> folded;
  std::string comm;
  uint32_t pid = 0;
  std::vector<std::string> frames;  // innermost first, as perf prints them
  auto flush = [&] {
    if (comm.empty() && frames.empty()) return;
    std::string stack = comm.empty() ? "[unknown]" : comm;
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) absl::StrAppend(&stack, ";", *it);
    ++folded[{pid, std::move(stack)}];
    comm.clear();
    pid = 0;
    frames.clear();
  };
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || absl::StripAsciiWhitespace(line).empty()) {
      flush();
      continue;
    }
    if (line[0] != '\t') {  // frames are tab-indented; a sample's header may be padded with spaces
      flush();
      // "<comm> <pid>": the thread's name (it may hold spaces) and its process.
      absl::string_view header = absl::StripAsciiWhitespace(line);
      const size_t space = header.find_last_of(" \t");
      if (space != absl::string_view::npos && absl::SimpleAtoi(header.substr(space + 1), &pid)) {
        header = absl::StripTrailingAsciiWhitespace(header.substr(0, space));
      } else {
        pid = 0;
      }
      comm = std::string(header);
      std::replace(comm.begin(), comm.end(), ';', ':');
      std::replace(comm.begin(), comm.end(), ' ', '_');  // the folded format ends at the last space
      continue;
    }
    // "\t<address> <symbol>": the symbol may hold spaces (C++ signatures), never a ';'.
    absl::string_view frame = absl::StripLeadingAsciiWhitespace(line);
    const size_t space = frame.find(' ');
    frame = space == absl::string_view::npos ? absl::string_view("[unknown]") : absl::StripAsciiWhitespace(frame.substr(space + 1));
    std::string name(frame.substr(0, kMaxFrame));
    std::replace(name.begin(), name.end(), ';', ':');
    frames.push_back(std::move(name));
  }
  flush();
  return folded;
}

void ParsePerfStat(const std::string& csv, v1::HostProfile* profile) {
  for (absl::string_view line : absl::StrSplit(csv, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<absl::string_view> f = absl::StrSplit(line, ',');
    if (f.size() < 3) continue;
    const absl::string_view event = absl::StripSuffix(absl::StripSuffix(f[2], ":u"), ":k");
    uint64_t value = 0;
    const bool counted = absl::SimpleAtoi(f[0], &value);
    if (event == "cycles" || event == "instructions" || event == "cache-misses") {
      if (!counted) {
        profile->add_problems(absl::StrCat("perf stat: ", event, " ", f[0], " here (the kernel or the VM does not expose this counter)"));
        continue;
      }
      if (event == "cycles") profile->set_has_cycles(true), profile->set_cycles(value);
      if (event == "instructions") profile->set_has_instructions(true), profile->set_instructions(value);
      if (event == "cache-misses") profile->set_has_cache_misses(true), profile->set_cache_misses(value);
    }
  }
}

absl::StatusOr<std::unique_ptr<HostProfiler>> HostProfiler::Start() {
  std::unique_ptr<HostProfiler> profiler(new HostProfiler);
  char pattern[] = "/tmp/iofleet-profile-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) return ErrnoStatus(errno, "--profile: a scratch directory");
  profiler->dir_ = pattern;
  const std::string perf = PerfBinary();
  absl::StatusOr<pid_t> record = Spawn({perf, "record", "-F", absl::StrCat(kFrequencyHz), "-a", "-g", "-o", profiler->dir_ + "/perf.data"},
                                       profiler->dir_ + "/record.log");
  if (!record.ok()) return record.status();
  profiler->record_ = *record;
  absl::StatusOr<pid_t> stat = Spawn({perf, "stat", "-a", "-x", ",", "-e", "cycles,instructions,cache-misses", "-o", profiler->dir_ + "/stat.csv"},
                                     profiler->dir_ + "/stat.log");
  if (stat.ok()) profiler->stat_ = *stat;
  profiler->started_ = NowSeconds();
  // perf refuses at once when it cannot sample (no permission, no perf for this kernel): say so
  // now rather than with an empty profile at the end.
  for (int i = 0; i < 20; ++i) {
    int status = 0;
    if (::waitpid(profiler->record_, &status, WNOHANG) == profiler->record_) {
      profiler->record_ = -1;
      return absl::FailedPreconditionError(absl::StrCat("--profile: perf record ended at once: ", Tail(ReadAll(profiler->dir_ + "/record.log"))));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return profiler;
}

HostProfiler::~HostProfiler() {
  if (record_ > 0) Interrupt(record_, 5);
  if (stat_ > 0) Interrupt(stat_, 5);
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

absl::StatusOr<v1::HostProfile> HostProfiler::Finish(size_t max_stacks) {
  v1::HostProfile profile;
  profile.set_frequency_hz(kFrequencyHz);
  profile.set_seconds(NowSeconds() - started_);
  const int recorded = Interrupt(record_, 30);
  record_ = -1;
  if (stat_ > 0) {
    Interrupt(stat_, 5);
    stat_ = -1;
    ParsePerfStat(ReadAll(dir_ + "/stat.csv"), &profile);
  } else {
    profile.add_problems("perf stat could not be started");
  }
  if (recorded != 0 && !(WIFSIGNALED(recorded) && WTERMSIG(recorded) == SIGINT) && !(WIFEXITED(recorded) && WEXITSTATUS(recorded) == 130)) {
    if (!std::filesystem::exists(dir_ + "/perf.data")) {
      return absl::InternalError(absl::StrCat("--profile: perf record failed: ", Tail(ReadAll(dir_ + "/record.log"))));
    }
  }
  // perf script, streamed through a pipe and folded as it comes.
  const std::string command = absl::StrCat(PerfBinary(), " script -F comm,pid,ip,sym -i ", dir_, "/perf.data 2>", dir_, "/script.log");
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return ErrnoStatus(errno, "--profile: perf script");
  std::string text;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) text.append(buffer, n);
  ::pclose(pipe);
  std::istringstream in(text);
  const std::map<std::pair<uint32_t, std::string>, uint64_t> folded = FoldPerfScript(in);
  std::vector<std::pair<uint64_t, const std::pair<uint32_t, std::string>*>> order;
  uint64_t samples = 0;
  for (const auto& [key, count] : folded) {
    order.emplace_back(count, &key);
    samples += count;
  }
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : *a.second < *b.second; });
  uint64_t other = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i + 1 >= max_stacks && order.size() > max_stacks) {
      other += order[i].first;
      continue;
    }
    v1::FoldedStack* stack = profile.add_stacks();
    stack->set_stack(order[i].second->second);
    stack->set_pid(order[i].second->first);
    stack->set_count(order[i].first);
  }
  if (other > 0) {
    v1::FoldedStack* stack = profile.add_stacks();
    stack->set_stack("[other stacks]");
    stack->set_count(other);
  }
  profile.set_samples(samples);
  if (samples == 0) profile.add_problems(absl::StrCat("perf recorded no samples: ", Tail(ReadAll(dir_ + "/record.log") + ReadAll(dir_ + "/script.log"))));
  return profile;
}

}  // namespace iofleet
