#pragma once
// Expectations kept in checked-in text files under tests/data/: one line per key (the first
// tab-separated field), compared exactly with what the test measured. Run the test with
// XEXP_UPDATE_GOLDEN=1 to rewrite the file from what it measured instead, then review `git diff` and
// commit it: counts that move with a deliberate change of the library are regenerated, not edited.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace xexp::testing {

inline bool updating_golden() {
  const char* value = std::getenv("XEXP_UPDATE_GOLDEN");
  return value && std::string(value) == "1";
}

inline std::filesystem::path golden_path(const std::string& file) {
  return std::filesystem::path(XEXP_SOURCE_DIR) / "tests" / "data" / file;
}

// Compares `lines` with tests/data/`file` (lines starting with '#' are comments). `header` (comment
// lines saying what the columns are and how to regenerate) is written at the top on update.
inline void expect_golden(const std::string& file, const std::vector<std::string>& lines, const std::string& header) {
  const std::filesystem::path path = golden_path(file);
  if (updating_golden()) {
    std::ofstream out(path, std::ios::binary);
    out << header;
    for (const std::string& line : lines) out << line << "\n";
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    std::cout << "XEXP_UPDATE_GOLDEN=1: rewrote " << path << " (" << lines.size() << " lines)\n";
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << path << " is missing: run the test with XEXP_UPDATE_GOLDEN=1 to write it";
  auto key_of = [](const std::string& line) { return line.substr(0, line.find('\t')); };
  std::map<std::string, std::string> expected, actual;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') expected[key_of(line)] = line;
  for (const std::string& line : lines) actual[key_of(line)] = line;
  std::ostringstream diff;
  std::size_t differences = 0;
  for (const auto& [key, line] : expected) {
    auto it = actual.find(key);
    if (it == actual.end()) diff << "  missing:  " << line << "\n";
    else if (it->second != line) diff << "  expected: " << line << "\n  measured: " << it->second << "\n";
    else continue;
    ++differences;
  }
  for (const auto& [key, line] : actual)
    if (!expected.count(key)) {
      diff << "  new:      " << line << "\n";
      ++differences;
    }
  EXPECT_EQ(differences, 0u) << path.filename().string() << " differs from what the test measured (if the "
                             << "change is deliberate, rerun with XEXP_UPDATE_GOLDEN=1 and commit the file):\n"
                             << diff.str();
}

}  // namespace xexp::testing
