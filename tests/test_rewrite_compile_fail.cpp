// A rule reading a capture its pattern does not bind, or binding one letter as two kinds of capture, is
// a compile error with a readable message. The compiler is run on tests/compile_fail/*.cpp: each valid
// variant must compile (so that a test cannot pass because of a broken command line), the invalid ones
// must fail with the message.
#include <gtest/gtest.h>

#include <string>

#include "support/process.hpp"

namespace {

// The command is appended piece by piece: g++ 12 at -O1 warns (array-bounds, a false positive) on chains
// of std::string +.
xexp::testing::CommandResult compile(const std::string& define, const char* file = "unbound_capture.cpp") {
#if defined(__clang__)
  std::string command = "clang++";
#else
  std::string command = "g++";
#endif
  const std::string root = XEXP_SOURCE_DIR;
  command += " -std=c++20 -fsyntax-only -DONNX_ML=1 -DONNX_NAMESPACE=onnx -I";
  command += xexp::testing::shell_quote(root + "/include");
  command += " ";
  command += define;
  command += " ";
  command += xexp::testing::shell_quote(root + "/tests/compile_fail/" + file);
  return xexp::testing::run_command(command);
}

}  // namespace

TEST(RewriteCompileFail, ValidRuleCompiles) {
  auto r = compile("");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(RewriteCompileFail, UnboundCaptureInConditionIsRejected) {
  auto r = compile("-DXEXP_UNBOUND_IN_CONDITION");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("xexp rule: the condition uses a capture that the pattern does not bind"), std::string::npos)
      << r.err;
}

TEST(RewriteCompileFail, UnboundCaptureInReplacementIsRejected) {
  auto r = compile("-DXEXP_UNBOUND_IN_REPLACEMENT");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("xexp rule: the replacement uses a capture that the pattern does not bind"),
            std::string::npos)
      << r.err;
}

TEST(RewriteCompileFail, ValidCaptureKindsCompile) {
  auto r = compile("", "capture_kinds.cpp");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(RewriteCompileFail, OneLetterAsValueAndAttributeIsRejected) {
  auto r = compile("-DXEXP_VALUE_AND_ATTRIBUTE", "capture_kinds.cpp");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("xexp rule: one letter names two kinds of capture"), std::string::npos) << r.err;
}

TEST(RewriteCompileFail, OneLetterAsValueAndConstantIsRejected) {
  auto r = compile("-DXEXP_VALUE_AND_CONSTANT", "capture_kinds.cpp");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("xexp rule: one letter names two kinds of capture"), std::string::npos) << r.err;
}
