#pragma once
// xexp::Error: the one exception type xexp throws. It names the node, the value and the cause, and may
// carry a debug dump (the builder attaches its state), so that a failure deep inside an optimization
// can be understood without a debugger.
#include <stdexcept>
#include <string>
#include <utility>

namespace xexp {

class Error : public std::runtime_error {
 public:
  struct Where {
    std::string node;   // node name (or op type when the node has no name)
    std::string value;  // value (tensor) name
  };

  explicit Error(std::string cause, Where where = {}, std::string dump = {})
      : std::runtime_error(format(cause, where)), cause_(std::move(cause)), where_(std::move(where)),
        dump_(std::move(dump)) {}

  const std::string& cause() const noexcept { return cause_; }
  const std::string& node() const noexcept { return where_.node; }
  const std::string& value() const noexcept { return where_.value; }
  // The state of whatever raised the error (empty when nothing was attached).
  const std::string& dump() const noexcept { return dump_; }
  Error&& with_dump(std::string dump) && {
    dump_ = std::move(dump);
    return std::move(*this);
  }

 private:
  static std::string format(const std::string& cause, const Where& where) {
    std::string out;
    if (!where.node.empty()) out += "node '" + where.node + "': ";
    if (!where.value.empty()) out += "value '" + where.value + "': ";
    return out + cause;
  }
  std::string cause_;
  Where where_;
  std::string dump_;
};

// Throws when `condition` is false; the message is only built on failure.
template <class MakeMessage>
inline void check(bool condition, MakeMessage&& make_message, Error::Where where = {}) {
  if (!condition) throw Error(std::forward<MakeMessage>(make_message)(), std::move(where));
}

}  // namespace xexp
