// Where a value sits in a JSON text, for error messages: nlohmann::json keeps no positions, so the text is
// walked once more (it already parsed, so the walk can be simple) until the pointer's value is reached.

#include <cctype>
#include <optional>

#include "topology/probe_json.hpp"

namespace autotune::topology::detail {
namespace {

class Walker {
 public:
  Walker(std::string_view text, std::string_view target) : text_(text), target_(target) {}

  int find() {
    value("");
    return found_;
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) advance();
  }
  void advance() {
    if (text_[pos_] == '\n') ++line_;
    ++pos_;
  }
  // A string's contents, escapes decoded only as far as JSON pointer segments need (\" \\ \/).
  std::string string() {
    std::string out;
    advance();  // opening quote
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) {
        advance();
        out += text_[pos_];
      } else {
        out += text_[pos_];
      }
      advance();
    }
    if (pos_ < text_.size()) advance();  // closing quote
    return out;
  }
  static std::string escape(const std::string& key) {
    std::string out;
    for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
    return out;
  }
  void value(const std::string& path) {
    skip_space();
    if (found_ || pos_ >= text_.size()) return;
    if (path == target_) {
      found_ = line_;
      return;
    }
    const char c = text_[pos_];
    if (c == '{') {
      advance();
      for (skip_space(); pos_ < text_.size() && text_[pos_] != '}' && !found_; skip_space()) {
        const std::string key = string();
        skip_space();
        if (pos_ < text_.size()) advance();  // ':'
        value(path + "/" + escape(key));
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == ',') advance();
      }
      if (pos_ < text_.size()) advance();
    } else if (c == '[') {
      advance();
      int index = 0;
      for (skip_space(); pos_ < text_.size() && text_[pos_] != ']' && !found_; skip_space()) {
        value(path + "/" + std::to_string(index++));
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == ',') advance();
      }
      if (pos_ < text_.size()) advance();
    } else if (c == '"') {
      string();
    } else {
      while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '}' && text_[pos_] != ']' &&
             !std::isspace(static_cast<unsigned char>(text_[pos_])))
        advance();
    }
  }

  std::string_view text_, target_;
  size_t pos_ = 0;
  int line_ = 1;
  int found_ = 0;
};

}  // namespace

int json_pointer_line(std::string_view text, std::string_view pointer) {
  return Walker(text, pointer).find();
}

}  // namespace autotune::topology::detail
