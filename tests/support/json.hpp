#pragma once
// Just enough JSON for the manifests exchanged with tests/ort/run_ort.js: objects, arrays, strings,
// numbers, true/false/null. Malformed text throws xexp::Error.
#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "xexp/core/error.hpp"

namespace xexp::testing {

struct Json {
  using Array = std::vector<Json>;
  using Object = std::map<std::string, Json, std::less<>>;
  std::variant<std::nullptr_t, bool, double, std::string, Array, Object> v;

  const Json& operator[](std::string_view key) const {
    const auto& obj = std::get<Object>(v);
    auto it = obj.find(key);
    if (it == obj.end()) throw Error("JSON object has no key '" + std::string(key) + "'");
    return it->second;
  }
  bool has(std::string_view key) const {
    return std::holds_alternative<Object>(v) && std::get<Object>(v).count(key) != 0;
  }
  const Array& array() const { return std::get<Array>(v); }
  const std::string& str() const { return std::get<std::string>(v); }
  double number() const { return std::get<double>(v); }
};

inline std::string json_quote(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : text_(text) {}
  Json parse() {
    Json j = value();
    skip_space();
    if (pos_ != text_.size()) fail("trailing characters");
    return j;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("malformed JSON at offset " + std::to_string(pos_) + ": " + what);
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool eat_word(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  Json value() {
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end");
    const char c = text_[pos_];
    if (c == '{') return object();
    if (c == '[') return array();
    if (c == '"') return Json{string()};
    if (eat_word("true")) return Json{true};
    if (eat_word("false")) return Json{false};
    if (eat_word("null")) return Json{nullptr};
    return number();
  }
  Json object() {
    expect('{');
    Json::Object obj;
    if (eat('}')) return Json{std::move(obj)};
    do {
      skip_space();
      std::string key = string();
      expect(':');
      obj.insert_or_assign(std::move(key), value());
    } while (eat(','));
    expect('}');
    return Json{std::move(obj)};
  }
  Json array() {
    expect('[');
    Json::Array arr;
    if (eat(']')) return Json{std::move(arr)};
    do arr.push_back(value());
    while (eat(','));
    expect(']');
    return Json{std::move(arr)};
  }
  std::string string() {
    if (pos_ >= text_.size() || text_[pos_] != '"') fail("expected a string");
    ++pos_;
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) fail("unfinished escape");
      c = text_[pos_++];
      switch (c) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': out += unicode_escape(); break;
        default: out += c;  // \" \\ \/
      }
    }
    if (pos_ >= text_.size()) fail("unfinished string");
    ++pos_;
    return out;
  }
  // \uXXXX as UTF-8 (surrogate pairs are not needed by the manifests and are kept as two code points).
  std::string unicode_escape() {
    if (pos_ + 4 > text_.size()) fail("short \\u escape");
    const unsigned code = static_cast<unsigned>(std::stoul(std::string(text_.substr(pos_, 4)), nullptr, 16));
    pos_ += 4;
    std::string out;
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xc0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3f));
    } else {
      out += static_cast<char>(0xe0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (code & 0x3f));
    }
    return out;
  }
  Json number() {
    const std::string rest(text_.substr(pos_, 64));
    char* end = nullptr;
    const double d = std::strtod(rest.c_str(), &end);
    if (end == rest.c_str()) fail("expected a value");
    pos_ += static_cast<std::size_t>(end - rest.c_str());
    return Json{d};
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

inline Json parse_json(std::string_view text) { return JsonParser(text).parse(); }

}  // namespace xexp::testing
