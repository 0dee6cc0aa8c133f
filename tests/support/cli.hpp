#pragma once
// Running the built `xexp` binary (XEXP_CLI) from a test, and the CLI's one-line error contract.
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>

#include "support/process.hpp"

namespace xexp::testing {

// Parts appended into one string (command lines, paths): g++ 12 at -O3 warns falsely
// (-Wstringop-overflow, -Warray-bounds) on chains of "literal" + std::string, an error under -Werror.
inline std::string joined(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view part : parts) out += part;
  return out;
}

inline CommandResult run_xexp(const std::string& args, const std::string& working_dir = {}) {
  return run_command(shell_quote(XEXP_CLI) + " " + args, working_dir);
}
inline CommandResult run_xexp(const std::string& args, const Limits& limits) {
  return run_command(limited(shell_quote(XEXP_CLI) + " " + args, limits));
}

// Failed with exit code 1 and exactly one line on stderr, starting with "error: ".
inline void expect_one_error_line(const CommandResult& r, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// The same, and the line names `mentions` (the value, node or option at fault).
inline void expect_error_mentioning(const CommandResult& r, const std::string& mentions) {
  expect_one_error_line(r, mentions);
  EXPECT_NE(r.err.find(mentions), std::string::npos) << r.err;
}

}  // namespace xexp::testing
