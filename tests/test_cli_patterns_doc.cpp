// docs/patterns.md is the catalogue `xexp patterns --markdown` prints: a rule added or changed without
// regenerating it fails here (regenerate: xexp patterns --markdown > docs/patterns.md). And
// `xexp optimize --explain RULE` tells, node by node, why RULE did not match.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "support/cli.hpp"
#include "support/temp_dir.hpp"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

// g++ 12 at -O1 warns (array-bounds) on chains of std::string +: the paths are appended piece by piece.
static std::string in_dir(const char* dir, const char* file) {
  std::string path = dir;
  path += file;
  return path;
}

TEST(CliPatternsDoc, TheCommittedCatalogueIsWhatTheRulesPrint) {
  const xexp::testing::CommandResult r = xexp::testing::run_xexp("patterns --markdown");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("### LayerNormalization (priority 1)"), std::string::npos);
  EXPECT_EQ(read_file(in_dir(XEXP_SOURCE_DIR, "/docs/patterns.md")), r.out)
      << "docs/patterns.md is stale: xexp patterns --markdown > docs/patterns.md";
}

// gpt_erf_L1 (torch, opset 18) has LayerNormalization nodes already: the rule's root op type (Div)
// matches the attention's scaling, whose numerator is a MatMul, not the centred input.
TEST(CliExplain, SaysWhyARuleDidNotMatchAtEachNode) {
  xexp::testing::TempDir dir;
  std::string args = "optimize ";
  args += in_dir(XEXP_SHARED_DIR, "/models/gpt_erf_L1.onnx");
  args += " -o ";
  args += (dir.path() / "o.onnx").string();
  const xexp::testing::CommandResult quiet = xexp::testing::run_xexp(args);
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.out.find(" @ "), std::string::npos) << quiet.out;
  args += "2 --explain LayerNormalization";
  const xexp::testing::CommandResult r = xexp::testing::run_xexp(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("LayerNormalization @ /h.0/attn/Div: Sub(x, ReduceMean(x, axes=a, keepdims=1)) did not match "
                       "MatMul '/h.0/attn/MatMul'"),
            std::string::npos)
      << r.out;
}
