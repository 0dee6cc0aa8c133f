#pragma once
// Running a shell command from a test and capturing its exit code, stdout and stderr.
#include <cstddef>
#include <cstdlib>
#include <string>

#include <sys/wait.h>

#include "support/temp_dir.hpp"

namespace xexp::testing {

// 'text' quoted for /bin/sh: safe for any path, spaces and quotes included.
inline std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

struct CommandResult {
  int exit_code = -1;  // the process's exit status; 128 + signal number when it was killed by a signal
  std::string out, err;
};

// Bounds on a command: killed after `seconds` (its exit code is then 137, 128 + SIGKILL), and an address
// space of at most `memory_mb` (0: unbounded; an allocation past it fails, as it would on a small machine).
struct Limits {
  int seconds = 0;
  std::size_t memory_mb = 0;
};

// `command` run under `limits` (ulimit -v, then coreutils' timeout), for /bin/sh.
inline std::string limited(const std::string& command, const Limits& limits) {
  std::string out;
  if (limits.memory_mb > 0) out += "ulimit -v " + std::to_string(limits.memory_mb * 1024) + " && ";
  if (limits.seconds > 0) out += "exec timeout -s KILL " + std::to_string(limits.seconds) + " ";
  return out + "/bin/sh -c " + shell_quote(command);
}

// Runs `command` with /bin/sh in `working_dir` (the current directory when empty).
inline CommandResult run_command(const std::string& command, const std::string& working_dir = {}) {
  TempDir capture;
  const std::string out_file = capture / "stdout", err_file = capture / "stderr";
  std::string full = "( " + command + " ) >" + shell_quote(out_file) + " 2>" + shell_quote(err_file) + " </dev/null";
  if (!working_dir.empty()) full = "cd " + shell_quote(working_dir) + " && " + full;
  const int status = std::system(full.c_str());
  CommandResult result;
  if (status == -1) throw Error("cannot start /bin/sh for: " + command);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(out_file);
  result.err = read_file(err_file);
  return result;
}

}  // namespace xexp::testing
