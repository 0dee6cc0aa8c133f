#pragma once
// Running the built `xexp` binary (XEXP_CLI) from a test, and the CLI's one-line error contract.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "support/process.hpp"

namespace xexp::testing {

inline CommandResult run_xexp(const std::string& args, const std::string& working_dir = {}) {
  return run_command(shell_quote(XEXP_CLI) + " " + args, working_dir);
}

// Failed with exit code 1 and exactly one line on stderr, starting with "error: ".
inline void expect_one_error_line(const CommandResult& r, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace xexp::testing
