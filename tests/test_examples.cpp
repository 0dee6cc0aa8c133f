// The packaging examples build and run against xexp as users get it: installed with `cmake --install`
// or from the Debian package (`cpack -G DEB`) and found with find_package or pkg-config, vendored with
// add_subdirectory, or fetched with FetchContent; and the single header, as scripts/make_single_include.sh
// makes it (that it compiles alone is the ctest SingleInclude.CompilesAlone, tests/single_include_alone.cpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/process.hpp"
#include "support/temp_dir.hpp"
#include "xexp/patterns/registry.hpp"
#include "xexp/rewrite/rule_set.hpp"

using namespace xexp::testing;

namespace {

const std::string kSource = XEXP_SOURCE_DIR;

// Configures and builds one example (only `target` when given); `extra` holds additional configure
// arguments.
void build_example(const std::string& name, const std::string& build_dir, const std::string& extra,
                   const std::string& target = {}) {
  const CommandResult configure = run_command("cmake -S " + shell_quote(kSource + "/examples/" + name) +
                                              " -B " + shell_quote(build_dir) + " -G Ninja " + extra);
  ASSERT_EQ(configure.exit_code, 0) << configure.out << configure.err;
  const CommandResult build = run_command("cmake --build " + shell_quote(build_dir) + " -j 2" +
                                          (target.empty() ? "" : " --target " + target));
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
}

// Configures, builds and runs one of the examples whose program is examples/example.cpp.
void build_and_run_example(const std::string& name, const std::string& build_dir,
                           const std::string& extra = {}) {
  SCOPED_TRACE(name);
  ASSERT_NO_FATAL_FAILURE(build_example(name, build_dir, extra));
  const CommandResult run = run_command(shell_quote(build_dir + "/example"), build_dir);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("Add(XW, B) -> Y"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("example: ok"), std::string::npos) << run.out;
}

}  // namespace

// `cmake --install` of this build tree (what it built is installed, nothing is built again: a second
// build of the compiled library would cost CI minutes and check nothing the DebPackage test does not),
// then examples/find_package and examples/custom_rule built against it.
TEST(Examples, FindPackageAfterInstall) {
  TempDir dir;
  const std::string prefix = dir / "prefix";
  const CommandResult install = run_command("cmake --install " + shell_quote(XEXP_BINARY_DIR) + " --prefix " +
                                            shell_quote(prefix));
  ASSERT_EQ(install.exit_code, 0) << install.out << install.err;
  EXPECT_TRUE(std::filesystem::exists(prefix + "/include/xexp/all.hpp"));
  // The compiled mode's static library is part of the package.
  EXPECT_TRUE(std::filesystem::exists(prefix + "/lib/libxexp_compiled.a"));
  build_and_run_example("find_package", dir / "example-build", "-DCMAKE_PREFIX_PATH=" + shell_quote(prefix));

  // The custom-rule example links the default target, xexp::xexp: the installed compiled rules, and its
  // own rule from custom_rules.cpp. Its tiny model fuses into one QuickGelu.
  const std::string custom_build = dir / "custom-rule-build";
  ASSERT_NO_FATAL_FAILURE(
      build_example("custom_rule", custom_build, "-DCMAKE_PREFIX_PATH=" + shell_quote(prefix)));
  const CommandResult run = run_command(shell_quote(custom_build + "/custom_rule"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("QuickGelu[com.microsoft](X, alpha=1) -> Y"), std::string::npos) << run.out;
}

TEST(Examples, AddSubdirectory) {
  TempDir dir;
  build_and_run_example("add_subdirectory", dir / "example-build");
}

// The Debian package of this build tree (cpack with the Ninja generator packages what is built, it
// builds nothing), extracted into a temporary root: its files, its CLI, a program built with its
// pkg-config flags, and examples/find_package built against its CMake package files.
TEST(Examples, DebPackage) {
  TempDir dir;
  const CommandResult pack = run_command("cpack -G DEB --config " +
                                         shell_quote(std::string(XEXP_BINARY_DIR) + "/CPackConfig.cmake") +
                                         " -B " + shell_quote(dir / "package"));
  ASSERT_EQ(pack.exit_code, 0) << pack.out << pack.err;
  std::string deb;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path() / "package"))
    if (entry.path().extension() == ".deb") deb = entry.path().string();
  ASSERT_FALSE(deb.empty()) << pack.out;
  const CommandResult fields = run_command("dpkg-deb -f " + shell_quote(deb) + " Package Depends");
  EXPECT_EQ(fields.out, "Package: xexp\nDepends: libonnx-dev, libprotobuf-dev, librange-v3-dev\n")
      << fields.err;
  const std::string usr = dir / "root/usr";
  const CommandResult extract =
      run_command("dpkg-deb -x " + shell_quote(deb) + " " + shell_quote(dir / "root"));
  ASSERT_EQ(extract.exit_code, 0) << extract.out << extract.err;
  for (const char* file :
       {"/include/xexp/all.hpp", "/lib/libxexp_compiled.a", "/lib/cmake/xexp/xexpConfig.cmake",
        "/lib/pkgconfig/xexp.pc", "/lib/pkgconfig/xexp-compiled.pc"})
    EXPECT_TRUE(std::filesystem::exists(usr + file)) << file;

  if (!std::string(XEXP_CLI).empty()) {
    const CommandResult cli = run_command(shell_quote(usr + "/bin/xexp") + " patterns onnxruntime");
    ASSERT_EQ(cli.exit_code, 0) << cli.out << cli.err;
    EXPECT_NE(cli.out.find("MultiHeadAttention"), std::string::npos) << cli.out;
  }

  // pkg-config finds the extracted files through paths relative to the .pc files.
  write_file(dir.path() / "count_rules.cpp",
             "#include <xexp/patterns/registry.hpp>\n#include <iostream>\n"
             "int main() { std::cout << xexp::rewrite::rules_from_string(\"default+onnxruntime\").size() << "
             "\" rules\\n\"; }\n");
  const CommandResult compile = run_command(
      "c++ count_rules.cpp -o count_rules $(PKG_CONFIG_PATH=" + shell_quote(usr + "/lib/pkgconfig") +
          " pkg-config --cflags --libs xexp-compiled)",
      dir.path().string());
  ASSERT_EQ(compile.exit_code, 0) << compile.out << compile.err;
  const CommandResult count = run_command(shell_quote(dir / "count_rules"));
  ASSERT_EQ(count.exit_code, 0) << count.out << count.err;
  EXPECT_EQ(count.out,
            std::to_string(xexp::rewrite::rules_from_string("default+onnxruntime").size()) + " rules\n");

  build_and_run_example("find_package", dir / "example-build", "-DCMAKE_PREFIX_PATH=" + shell_quote(usr));
  EXPECT_NE(
      read_file(dir.path() / "example-build/CMakeCache.txt").find("xexp_DIR:PATH=" + usr + "/lib/cmake/xexp"),
      std::string::npos);
}

// FetchContent on this working tree (FETCHCONTENT_SOURCE_DIR_XEXP: no clone); the example's program
// prints an exported model.
TEST(Examples, FetchContent) {
  TempDir dir;
  const std::string build_dir = dir / "example-build";
  ASSERT_NO_FATAL_FAILURE(build_example(
      "fetch_content", build_dir, "-DFETCHCONTENT_SOURCE_DIR_XEXP=" + shell_quote(kSource), "print_model"));
  const CommandResult run = run_command(shell_quote(build_dir + "/print_model") + " " +
                                        shell_quote(std::string(XEXP_SHARED_DIR) + "/models/llama_L1.onnx"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("-> logits"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\n212 nodes\n"), std::string::npos) << run.out;
}

// single_include/xexp/xexp.hpp must be what scripts/make_single_include.sh makes from include/xexp today.
TEST(SingleInclude, IsUpToDate) {
  TempDir dir;
  const std::string fresh = dir / "xexp.hpp";
  const CommandResult make =
      run_command("bash " + shell_quote(kSource + "/scripts/make_single_include.sh") + " " + shell_quote(fresh));
  ASSERT_EQ(make.exit_code, 0) << make.out << make.err;
  const std::string expected = read_file(fresh);
  ASSERT_FALSE(expected.empty());
  EXPECT_TRUE(read_file(kSource + "/single_include/xexp/xexp.hpp") == expected)
      << "single_include/xexp/xexp.hpp is out of date: run scripts/make_single_include.sh and commit the result";
}
