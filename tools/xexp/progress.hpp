#pragma once
// Progress of a long run (`xexp optimize`, `xexp run`) on stderr: one line rewritten in place, only when
// stderr is a terminal and once the run has lasted a second, at most ten times a second. The line is
// erased when the run ends, so the command's own output reads as without it. Piped, nothing is written.
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <string>

namespace xexp::cli {

class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ProgressLine(bool wanted = true) : enabled_(wanted && ::isatty(STDERR_FILENO) == 1) {}
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine() { erase(); }

  // Shows make_text() when due; the text is only built then.
  template <class MakeText>
  void update(MakeText&& make_text) {
    if (!enabled_) return;
    const Clock::time_point now = Clock::now();
    if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    std::cerr << "\r\033[K" << make_text() << std::flush;
    shown_ = true;
  }

  void erase() {
    if (!shown_) return;
    std::cerr << "\r\033[K" << std::flush;
    shown_ = false;
  }

 private:
  bool enabled_;
  bool shown_ = false;
  Clock::time_point start_ = Clock::now(), last_ = {};
};

}  // namespace xexp::cli
