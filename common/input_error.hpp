#pragma once
// The one error type for bad input anywhere in the project: a file (or "<argument>", "<env NAME>"), a line
// when known (0 = not applicable), and what was expected. The CLI's top-level handler prints what() on one
// stderr line and exits 2; library code never prints.

#include <stdexcept>
#include <string>

namespace autotune {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, int line, const std::string& message);
  explicit InputError(const std::string& message) : InputError("", 0, message) {}

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  // The message without the "file:line: " prefix.
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  std::string message_;
};

// Exit statuses shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitBadInput = 2;

}  // namespace autotune
