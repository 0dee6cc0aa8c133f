#pragma once
// ElementCap: the most elements a tensor allocated in this thread may hold while the cap is in scope.
// Constant folding sets it to its size limit around each kernel: what folding creates is stored in the
// model, and the output's shape is not always known before the kernel runs (a ConstantOfShape of a
// computed shape), so the kernel itself must give up before it allocates, not after.
#include <cstdint>
#include <limits>
#include <string>

#include "xexp/core/error.hpp"

namespace xexp {

class ElementCap {
 public:
  explicit ElementCap(int64_t max_elements) : previous_(current()) { current() = max_elements; }
  ElementCap(const ElementCap&) = delete;
  ElementCap& operator=(const ElementCap&) = delete;
  ~ElementCap() { current() = previous_; }

  // The cap in force in this thread (int64's maximum when none is set).
  static int64_t& current() {
    static thread_local int64_t cap = std::numeric_limits<int64_t>::max();
    return cap;
  }

  // Throws before a tensor (or a kernel's table sized by one) of `elements` elements is allocated past the cap.
  static void check(int64_t elements) {
    if (elements > current())
      throw Error("the result would hold " + std::to_string(elements) + " elements, past the cap of " +
                  std::to_string(current()) + " (FoldOptions::max_elements)");
  }

 private:
  int64_t previous_;
};

}  // namespace xexp
