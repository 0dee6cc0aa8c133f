#pragma once
// The CLI's one rule for failures: whatever goes wrong is reported as exactly one line
// "error: <message>" on stderr with exit code 1 — never a crash, never a stack dump.
#include <exception>
#include <functional>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

namespace xexp::cli {

inline std::string one_line(std::string message) {
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  return message;
}

inline int report_error(const std::string& message) {
  std::cerr << "error: " << one_line(message) << std::endl;
  return 1;
}

// Parses the command line and runs the selected command (CLI11 runs callbacks inside parse).
inline int run(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return 0;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return report_error(std::string(e.what()) + " (run with --help for usage)");
  } catch (const std::exception& e) {
    return report_error(e.what());
  } catch (...) {
    return report_error("unexpected failure");
  }
}

}  // namespace xexp::cli
