#include "controller/ssh_workers.h"

#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace iofleet {
namespace {

// `text` as one word for a POSIX shell: in single quotes, each ' written as '\''.
std::string ShellQuote(const std::string& text) { return absl::StrCat("'", absl::StrReplaceAll(text, {{"'", "'\\''"}}), "'"); }

}  // namespace

std::string RemoteWorkerCommand(const SshLaunch& launch, size_t rank, uint64_t binary_size) {
  std::vector<std::string> args = {"--controller", launch.controller, "--token-env", "IOFLEET_RUN_TOKEN", "--create-roots",
                                   "--sessions", "1", "--stdin-lifeline", "--log-level", "warning"};
  for (const std::string& root : launch.allowed_roots) {
    args.push_back("--allow-root");
    args.push_back(root);
  }
  std::string quoted;
  for (const std::string& arg : args) absl::StrAppend(&quoted, " ", ShellQuote(arg));
  // The token is the first line on stdin (read(1) stops at the newline, leaving the rest).
  const std::string prologue = absl::StrCat("IFS= read -r IOFLEET_RUN_TOKEN && export IOFLEET_RUN_TOKEN IOFLEET_LAUNCH_RANK=", rank);
  if (launch.copy_binary.empty()) return absl::StrCat(prologue, " && exec ", ShellQuote(launch.remote_worker), quoted);
  // Then the binary, exactly binary_size bytes, into a file removed however the shell ends; the
  // worker keeps the rest of stdin as its lifeline.
  return absl::StrCat(prologue, " && f=$(mktemp /tmp/iofleet-worker-ssh.XXXXXX) && trap 'rm -f \"$f\"' EXIT HUP INT TERM && head -c ",
                      binary_size, " > \"$f\" && chmod 700 \"$f\" && \"$f\"", quoted);
}

absl::Status SshWorkers::Start(const SshLaunch& launch, std::function<void()> on_exit) {
  launch_ = launch;
  std::string binary;
  if (!launch.copy_binary.empty()) {
    std::ifstream in(launch.copy_binary, std::ios::binary);
    if (!in) return absl::NotFoundError(absl::StrCat("--ssh-copy: cannot read the worker binary ", launch.copy_binary));
    binary.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::vector<std::string> ssh = absl::StrSplit(launch.ssh_command, ' ', absl::SkipWhitespace());
  if (ssh.empty()) return absl::InvalidArgumentError("--ssh-command is empty");
  for (size_t i = 0; i < launch.hosts.size(); ++i) {
    std::vector<std::string> argv = ssh;
    // No terminal, never a password prompt (a run cannot answer one).
    argv.insert(argv.end(), {"-T", "-o", "BatchMode=yes", launch.hosts[i], "--", RemoteWorkerCommand(launch, i, binary.size())});
    auto connection = std::make_unique<ChildProcess>();
    absl::Status started = connection->Start(ChildProcess::Options{.argv = argv, .stdin_pipe = true, .on_exit = on_exit});
    if (!started.ok()) return started;
    // What the remote shell reads first; a host whose ssh already failed says so in EndedEarly.
    (void)(connection->Write(launch.token + "\n") && (binary.empty() || connection->Write(binary)));
    connections_.push_back(std::move(connection));
  }
  return absl::OkStatus();
}

std::string SshWorkers::EndedEarly() const {
  std::vector<std::string> ended;
  for (size_t i = 0; i < connections_.size(); ++i) {
    if (connections_[i]->exited()) ended.push_back(absl::StrCat("ssh ", launch_.hosts[i], " (", connections_[i]->exit_description(), ")"));
  }
  return absl::StrJoin(ended, ", ");
}

void SshWorkers::Stop() {
  // The workers leave when their session is over (--sessions 1), or when their stdin closes.
  for (auto& connection : connections_) connection->CloseStdin();
  for (auto& connection : connections_) connection->Stop(std::chrono::seconds(5));
  connections_.clear();
}

}  // namespace iofleet
