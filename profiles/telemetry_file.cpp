#include "profiles/telemetry_file.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <optional>
#include <sstream>

#include "common/input_error.hpp"
#include "profiles/store.hpp"

namespace autotune::profiles {
namespace {

constexpr std::string_view kMagic = "# nccl-autotune telemetry";

std::string word(std::string_view s) {
  return telemetry_word(s);
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string bytes_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string row_text(const TelemetryRow& r) {
  return "row " + std::to_string(r.nodes) + " " + std::to_string(r.ranks) + " " +
         std::to_string(r.ranks_per_node) + " " + std::string(nccl::name(r.collective)) + " " +
         std::to_string(r.bytes_log2) + " " + std::string(nccl::name(r.algorithm)) + " " +
         std::string(nccl::name(r.protocol)) + " " + std::to_string(r.channels) + " " +
         std::to_string(r.count) + " " + bytes_number(r.mean_bytes) + " " + number(r.mean_us) + " " +
         number(r.p25_us) + " " + number(r.p50_us) + " " + number(r.p75_us) + " " + number(r.p90_us) + " " +
         number(r.p99_us) + " " + number(r.min_us) + " " + number(r.max_us) + "\n";
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

template <typename T>
std::optional<T> integer(std::string_view s) {
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> real(std::string_view s) {
  try {
    size_t used = 0;
    double v = std::stod(std::string(s), &used);
    if (used != s.size() || !std::isfinite(v) || v < 0) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

class Parser {
 public:
  explicit Parser(std::string_view file) : file_(file) {}

  [[noreturn]] void fail(int line, const std::string& what) const {
    throw InputError(std::string(file_), line, what);
  }

  TelemetryRow row(const std::vector<std::string_view>& f, int line) const {
    if (f.size() != 19)
      fail(line,
           "expected `row` and 18 fields (nodes ranks ranks_per_node collective bytes_log2 algorithm "
           "protocol channels count mean_bytes mean p25 p50 p75 p90 p99 min max); found " +
               std::to_string(f.size() - 1));
    TelemetryRow r;
    r.line = line;
    auto count = [&](size_t i, int max, const char* what) {
      auto v = integer<int>(f[i]);
      if (!v || *v < 0 || *v > max)
        fail(line, std::string("expected ") + what + " 0.." + std::to_string(max) + "; found \"" +
                       std::string(f[i]) + "\"");
      return *v;
    };
    r.nodes = count(1, 8191, "nodes");
    r.ranks = count(2, 131071, "ranks");
    r.ranks_per_node = count(3, 131071, "ranks per node");
    auto c = nccl::parse_collective(f[4]);
    if (!c) fail(line, "expected a collective; found \"" + std::string(f[4]) + "\"");
    r.collective = *c;
    r.bytes_log2 = count(5, 63, "a size bucket (log2 bytes)");
    auto a = nccl::parse_algorithm(f[6]);
    auto p = nccl::parse_protocol(f[7]);
    if (!a || !p)
      fail(line, "expected an algorithm and a protocol; found \"" + std::string(f[6]) + " " +
                     std::string(f[7]) + "\"");
    r.algorithm = *a;
    r.protocol = *p;
    r.channels = count(8, 127, "channels");
    auto n = integer<uint64_t>(f[9]);
    if (!n || *n == 0) fail(line, "expected a count >= 1; found \"" + std::string(f[9]) + "\"");
    r.count = *n;
    double* values[] = {&r.mean_bytes, &r.mean_us, &r.p25_us, &r.p50_us, &r.p75_us,
                        &r.p90_us,     &r.p99_us,  &r.min_us, &r.max_us};
    for (size_t i = 0; i < 9; ++i) {
      auto v = real(f[10 + i]);
      if (!v)
        fail(line, "expected a number >= 0 (bytes, microseconds); found \"" + std::string(f[10 + i]) + "\"");
      *values[i] = *v;
    }
    if (auto problem = row_problem(r)) fail(line, *problem);
    return r;
  }

  Telemetry parse(std::string_view text) {
    Telemetry t;
    int line = 0;
    bool ended = false;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos)
        fail(line + 1, "expected a line ending in a newline; found the file cut short");
      std::string_view l = text.substr(pos, nl - pos);
      pos = nl + 1;
      ++line;
      if (line == 1) {
        if (l.substr(0, kMagic.size()) != kMagic)
          fail(1, "expected \"" + std::string(kMagic) + "\" (a telemetry file); found another file");
        continue;
      }
      if (ended) fail(line, "expected nothing after `end`; found more");
      auto f = split(l);
      if (f.empty()) continue;
      if (line == 2 && !(f.size() == 2 && f[0] == "telemetry" && f[1] == std::to_string(kTelemetryFormat)))
        fail(2, "expected \"telemetry " + std::to_string(kTelemetryFormat) + "\"; found \"" + std::string(l) +
                    "\"");
      if (line == 2) continue;
      header_or_row(t, f, l, line, &ended);
    }
    if (!ended) fail(line, "expected an `end` line; found the file cut short");
    if (t.digest.size() != 16) fail(line, "expected a `digest` line with 16 hex digits; found none");
    return t;
  }

  void header_or_row(Telemetry& t, const std::vector<std::string_view>& f, std::string_view l, int line,
                     bool* ended) const {
    const std::string_view key = f[0];
    if (key == "row") {
      t.rows.push_back(row(f, line));
      return;
    }
    if (key == "end") {
      auto n = f.size() == 2 ? integer<size_t>(f[1]) : std::nullopt;
      if (!n || *n != t.rows.size())
        fail(line, "expected `end " + std::to_string(t.rows.size()) + "` (the rows above); found \"" +
                       std::string(l) + "\"");
      *ended = true;
      return;
    }
    if (key == "truncated") {
      t.truncated = true;
      return;
    }
    if (f.size() != 2) fail(line, "expected `key value`; found \"" + std::string(l) + "\"");
    const std::string v(f[1]);
    if (key == "digest") {
      if (v.size() != 16 || v.find_first_not_of("0123456789abcdef") != std::string::npos)
        fail(line, "expected 16 hex digits; found \"" + v + "\"");
      t.digest = v;
    } else if (key == "cluster") {
      t.cluster = v;
    } else if (key == "nccl") {
      t.nccl_version = v;
    } else if (key == "job") {
      t.job = v;
    } else if (key == "rank") {
      t.rank = v;
    } else if (key == "host") {
      t.host = v;
    } else if (key == "written" || key == "dropped") {
      auto n = integer<int64_t>(f[1]);
      if (!n || *n < 0) fail(line, "expected an integer >= 0; found \"" + v + "\"");
      if (key == "written")
        t.written = *n;
      else
        t.dropped = static_cast<uint64_t>(*n);
    } else {
      fail(line,
           "expected one of digest, cluster, nccl, job, rank, host, written, dropped, truncated, row, "
           "end; found \"" +
               std::string(key) + "\"");
    }
  }

 private:
  std::string_view file_;
};

}  // namespace

std::string telemetry_word(std::string_view s) {
  std::string out(s.empty() ? "-" : s);
  for (char& c : out)
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') c = '_';
  return out;
}

std::optional<std::string> row_problem(const TelemetryRow& r) {
  if (r.nodes < 1 || r.ranks < r.nodes)
    return "expected a shape with 1 <= nodes <= ranks; found nodes " + std::to_string(r.nodes) + ", ranks " +
           std::to_string(r.ranks);
  if (!nccl::is_allowed(r.collective, r.algorithm, r.protocol))
    return "expected a choice NCCL can run for " + std::string(nccl::name(r.collective)) + "; found " +
           std::string(nccl::name(r.algorithm)) + "/" + std::string(nccl::name(r.protocol));
  const int per_node = r.ranks % r.nodes == 0 ? r.ranks / r.nodes : 0;
  if (r.ranks_per_node != per_node)
    return "expected ranks per node " + std::to_string(per_node) +
           " (ranks / nodes when even, else 0); found " + std::to_string(r.ranks_per_node);
  if (r.channels < 1 || r.channels > nccl::kMaxChannels)
    return "expected channels 1.." + std::to_string(nccl::kMaxChannels) + "; found " +
           std::to_string(r.channels);
  const double low = std::ldexp(1.0, r.bytes_log2), high = std::ldexp(1.0, r.bytes_log2 + 1);
  // The file keeps six digits: a mean at the bucket's edge may print a hair outside it.
  if (r.count == 0 || !(r.mean_bytes >= low * (1 - 1e-6)) || !(r.mean_bytes <= high * (1 + 1e-6)))
    return "expected a mean size in the bucket 2^" + std::to_string(r.bytes_log2) + " (" + number(low) +
           ".." + number(high) + " bytes); found " + number(r.mean_bytes);
  const double q[] = {r.min_us, r.p25_us, r.p50_us, r.p75_us, r.p90_us, r.p99_us, r.max_us};
  for (double v : q)
    if (!(v > 0.0 && v <= 1e9)) return "expected times in 0..1e9 us, above 0; found " + number(v);
  for (size_t i = 1; i < std::size(q); ++i)
    if (q[i] < q[i - 1])
      return "expected min <= p25 <= p50 <= p75 <= p90 <= p99 <= max; found " + number(q[i - 1]) +
             " before " + number(q[i]);
  if (!(r.mean_us >= r.min_us * (1 - 1e-5) && r.mean_us <= r.max_us * (1 + 1e-5)))
    return "expected the mean within min..max (" + number(r.min_us) + ".." + number(r.max_us) +
           " us); found " + number(r.mean_us);
  return std::nullopt;
}

std::string format_telemetry(const Telemetry& t) {
  std::string rows;
  size_t kept = 0, refused = 0;
  bool truncated = t.truncated;
  std::string head = std::string(kMagic) + ": GPU times per choice NCCL ran (docs/online.md)\n";
  head += "telemetry " + std::to_string(kTelemetryFormat) + "\n";
  head +=
      "digest " + word(t.digest) + "\ncluster " + word(t.cluster) + "\nnccl " + word(t.nccl_version) + "\n";
  head += "job " + word(t.job) + "\nrank " + word(t.rank) + "\nhost " + word(t.host) + "\n";
  for (const TelemetryRow& r : t.rows)
    if (row_problem(r)) ++refused;
  head += "written " + std::to_string(t.written) + "\ndropped " + std::to_string(t.dropped + refused) + "\n";
  for (const TelemetryRow& r : t.rows) {
    if (row_problem(r)) continue;
    std::string line = row_text(r);
    if (head.size() + rows.size() + line.size() + 64 > kMaxTelemetryBytes) {
      truncated = true;
      break;
    }
    rows += line;
    ++kept;
  }
  return head + (truncated ? "truncated\n" : "") + rows + "end " + std::to_string(kept) + "\n";
}

Telemetry parse_telemetry(std::string_view text, std::string_view file) {
  return Parser(file).parse(text);
}

std::string telemetry_file_name(std::string_view digest, std::string_view job, std::string_view rank) {
  return sanitize_file_name(std::string(digest) + "-" + std::string(job) + "-" + std::string(rank)) +
         ".telemetry";
}

}  // namespace autotune::profiles
