// The packaging examples build and run against xexp as users get it: installed with `cmake --install`
// and found with find_package, or vendored with add_subdirectory.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

using namespace xexp::testing;

namespace {

const std::string kSource = XEXP_SOURCE_DIR;

// Configures, builds and runs one example; `extra` holds additional configure arguments.
void build_and_run_example(const std::string& name, const std::string& build_dir, const std::string& extra = {}) {
  SCOPED_TRACE(name);
  const CommandResult configure = run_command("cmake -S " + shell_quote(kSource + "/examples/" + name) + " -B " +
                                              shell_quote(build_dir) + " -G Ninja " + extra);
  ASSERT_EQ(configure.exit_code, 0) << configure.out << configure.err;
  const CommandResult build = run_command("cmake --build " + shell_quote(build_dir) + " -j 2");
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  const CommandResult run = run_command(shell_quote(build_dir + "/example"), build_dir);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("Add(XW, B) -> Y"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("example: ok"), std::string::npos) << run.out;
}

}  // namespace

TEST(Examples, FindPackageAfterInstall) {
  TempDir dir;
  const std::string prefix = dir / "prefix";
  const CommandResult configure =
      run_command("cmake -S " + shell_quote(kSource) + " -B " + shell_quote(dir / "xexp-build") +
                  " -G Ninja -DXEXP_BUILD_TESTS=OFF -DXEXP_BUILD_BENCH=OFF -DXEXP_BUILD_CLI=OFF");
  ASSERT_EQ(configure.exit_code, 0) << configure.out << configure.err;
  // The compiled mode's static library is part of the package.
  const CommandResult build = run_command("cmake --build " + shell_quote(dir / "xexp-build") + " -j 2");
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  const CommandResult install = run_command("cmake --install " + shell_quote(dir / "xexp-build") + " --prefix " + shell_quote(prefix));
  ASSERT_EQ(install.exit_code, 0) << install.out << install.err;
  EXPECT_TRUE(std::filesystem::exists(prefix + "/include/xexp/all.hpp"));
  EXPECT_TRUE(std::filesystem::exists(prefix + "/lib/libxexp_compiled.a"));
  build_and_run_example("find_package", dir / "example-build", "-DCMAKE_PREFIX_PATH=" + shell_quote(prefix));
}

TEST(Examples, AddSubdirectory) {
  TempDir dir;
  build_and_run_example("add_subdirectory", dir / "example-build");
}
