// single_include/xexp/xexp.hpp is the library in one header: it must be what
// scripts/make_single_include.sh makes from include/xexp today, and it must compile on its own (this
// file includes nothing else of xexp, so any header the generator dropped shows up as an error here).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

#include "../single_include/xexp/xexp.hpp"

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST(SingleInclude, IsUpToDate) {
  const std::string committed = std::string(XEXP_SOURCE_DIR) + "/single_include/xexp/xexp.hpp";
  const std::string fresh = ::testing::TempDir() + "xexp_single_include_" + std::to_string(::getpid()) + ".hpp";
  const std::string command = "bash '" + std::string(XEXP_SOURCE_DIR) + "/scripts/make_single_include.sh' '" + fresh + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const std::string expected = slurp(fresh);
  std::remove(fresh.c_str());
  ASSERT_FALSE(expected.empty());
  EXPECT_TRUE(slurp(committed) == expected)
      << committed << " is out of date: run scripts/make_single_include.sh and commit the result";
}

TEST(SingleInclude, CompilesAndWorksAlone) {
  xexp::ir::Model model;
  xexp::ir::Graph& g = *model.graph;
  const auto x = g.add_input("X", xexp::ElemType::Float, xexp::Shape{2});
  const auto y = g.add_value("Y");
  g.add_node("Relu", {x}, {y});
  g.add_output(y);
  EXPECT_NE(xexp::tools::pretty(model).find("Relu(X) -> Y"), std::string::npos);
}
