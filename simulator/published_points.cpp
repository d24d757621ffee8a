#include "simulator/published_points.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "simulator/published_data.hpp"

namespace autotune::sim {
namespace {

constexpr const char* kHeader = "machine,nodes,gpus,collective,bytes,algorithm,env,busbw_gbps,source";

// The first eight fields split at commas; the source, last, keeps any commas it has.
std::vector<std::string> split_row(std::string_view row) {
  std::vector<std::string> out;
  size_t start = 0;
  while (out.size() < 8) {
    const size_t comma = row.find(',', start);
    if (comma == std::string_view::npos) break;
    out.emplace_back(row.substr(start, comma - start));
    start = comma + 1;
  }
  out.emplace_back(row.substr(start));
  return out;
}

int positive_int(const std::string& file, int line, const char* column, const std::string& text) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1 || v > 4096)
    throw InputError(file, line,
                     std::string(column) + ": expected a whole number 1..4096, found '" + text + "'");
  return v;
}

std::map<std::string, std::string> parse_env(const std::string& file, int line, const std::string& text) {
  std::map<std::string, std::string> env;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find(';', start), text.size());
    const std::string item = text.substr(start, end - start);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || item.rfind("NCCL_", 0) != 0)
      throw InputError(file, line,
                       "env: expected NCCL_NAME=VALUE pairs separated by ';', found '" + item + "'");
    env[item.substr(0, eq)] = item.substr(eq + 1);
    start = end + 1;
  }
  return env;
}

PublishedPoint parse_row(const std::string& file, int line, std::string_view row) {
  const std::vector<std::string> f = split_row(row);
  if (f.size() != 9)
    throw InputError(file, line,
                     std::string("expected 9 columns (") + kHeader + "), found " + std::to_string(f.size()));
  PublishedPoint p;
  p.line = line;
  p.machine = f[0];
  if (p.machine.empty()) throw InputError(file, line, "machine: expected a bundled example's name, found ''");
  p.nodes = positive_int(file, line, "nodes", f[1]);
  p.gpus_per_node = positive_int(file, line, "gpus", f[2]);
  const auto c = nccl::parse_collective(f[3]);
  if (!c)
    throw InputError(file, line, "collective: expected a collective such as allreduce, found '" + f[3] + "'");
  p.collective = *c;
  const auto bytes = parse_byte_size(f[4]);
  if (!bytes || *bytes == 0)
    throw InputError(file, line, "bytes: expected a size such as 8G, found '" + f[4] + "'");
  p.bytes = *bytes;
  if (!f[5].empty()) {
    p.algorithm = nccl::parse_algorithm(f[5]);
    if (!p.algorithm)
      throw InputError(file, line, "algorithm: expected an NCCL algorithm or nothing, found '" + f[5] + "'");
  }
  p.env = parse_env(file, line, f[6]);
  char* end = nullptr;
  p.busbw_gbps = std::strtod(f[7].c_str(), &end);
  if (f[7].empty() || *end != '\0' || !std::isfinite(p.busbw_gbps) || p.busbw_gbps <= 0.0)
    throw InputError(file, line, "busbw_gbps: expected a positive number, found '" + f[7] + "'");
  p.source = f[8];
  if (p.source.empty())
    throw InputError(file, line, "source: expected where the figure was published, found ''");
  return p;
}

}  // namespace

std::vector<PublishedPoint> parse_published_points(std::string_view text, const std::string& file) {
  std::vector<PublishedPoint> out;
  bool header = false;
  int line = 0;
  size_t start = 0;
  while (start < text.size()) {
    const size_t nl = std::min(text.find('\n', start), text.size());
    const std::string_view row = text.substr(start, nl - start);
    start = nl + 1;
    ++line;
    if (row.empty() || row.front() == '#') continue;
    if (!header) {
      if (row != kHeader) throw InputError(file, line, std::string("expected the header ") + kHeader);
      header = true;
      continue;
    }
    out.push_back(parse_row(file, line, row));
  }
  if (out.empty()) throw InputError(file, line, "expected at least one published point, found none");
  return out;
}

const std::vector<PublishedPoint>& published_points() {
  static const std::vector<PublishedPoint> points =
      parse_published_points(detail::published_points_csv(), "simulator/published/points.csv");
  return points;
}

}  // namespace autotune::sim
