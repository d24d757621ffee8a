#include "nccl_tests/nccl_tests_file.hpp"

#include <cctype>
#include <sstream>

#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "common/text.hpp"
#include "nccl_tests/nccl_tests_json.hpp"

namespace autotune::nccl_tests {
namespace {

std::string_view trim_left(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  return s;
}

enum class LineKind { other, marker, thread_line, table_header };

// What a line tells the splitter. A thread line is both a marker and the body of a test.
LineKind classify(std::string_view line) {
  std::string_view t = trim_left(strip_launcher_prefix(line));
  if (t.starts_with("Running:")) return LineKind::marker;
  if (!t.starts_with('#')) return LineKind::other;
  std::string_view c = trim_left(t.substr(1));
  if (c.starts_with("nThread ") && c.size() > 8 && std::isdigit(static_cast<unsigned char>(c[8])))
    return LineKind::thread_line;
  if (c.starts_with("nccl-tests version") || c.starts_with("Collective test starting:") ||
      c.starts_with("nccl-autotune bench:"))
    return LineKind::marker;
  bool size = false, busbw = false;
  for (const std::string& w : split_whitespace(c)) size |= w == "size", busbw |= w == "busbw";
  return size && busbw ? LineKind::table_header : LineKind::other;
}

std::string where(const std::string& file, int first, int last) {
  return file + ":" + std::to_string(first) + (last > first ? "-" + std::to_string(last) : "");
}

}  // namespace

std::vector<std::pair<int, int>> split_tests(std::string_view text) {
  std::vector<std::pair<int, int>> out;
  int line_no = 0, start = 1;
  bool body = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    LineKind kind = classify(line);
    if ((kind == LineKind::marker || kind == LineKind::thread_line) && body) {
      out.emplace_back(start, line_no - 1);
      start = line_no;
      body = false;
    }
    body |= kind == LineKind::thread_line || kind == LineKind::table_header;
  }
  out.emplace_back(start, std::max(line_no, start));
  return out;
}

NcclTestsFile parse_nccl_tests_file(std::string_view text, const std::string& file,
                                    std::optional<std::string> collective) {
  NcclTestsFile out;
  out.file = file;
  if (looks_like_json(text)) {
    out.tests = parse_nccl_tests_json(text, file, collective);
    return out;
  }
  const auto ranges = split_tests(text);
  std::vector<size_t> offsets = {0};  // byte offset of each line
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') offsets.push_back(i + 1);
  offsets.push_back(text.size());
  std::optional<InputError> first_error;
  for (auto [first, last] : ranges) {
    const size_t begin = offsets[std::min<size_t>(first - 1, offsets.size() - 1)];
    const size_t end = offsets[std::min<size_t>(last, offsets.size() - 1)];
    try {
      out.tests.push_back(parse_nccl_tests_log(text.substr(begin, end - begin), file, collective, first));
    } catch (const InputError& e) {
      if (e.file() != file) throw;  // a bad --collective, not a bad test
      if (!first_error) first_error = e;
      out.unreadable.push_back({where(file, first, last), e.message()});
    }
  }
  if (!out.tests.empty()) return out;
  if (ranges.size() == 1) throw *first_error;
  std::string why;
  for (const auto& u : out.unreadable) why += (why.empty() ? "" : "; ") + u.where + ": " + u.reason;
  throw InputError(file, first_error->line(),
                   "expected at least one readable nccl-tests test, found " + std::to_string(ranges.size()) +
                       " unreadable ones (" + why + ")");
}

NcclTestsFile read_nccl_tests_file(const std::filesystem::path& path, std::optional<std::string> collective) {
  return parse_nccl_tests_file(read_file(path, kLogInput), path.string(), std::move(collective));
}

}  // namespace autotune::nccl_tests
