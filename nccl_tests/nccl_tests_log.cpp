#include "nccl_tests/nccl_tests_log.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <set>
#include <sstream>

#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "common/text.hpp"
#include "runners/runner.hpp"

namespace autotune::nccl_tests {
namespace {

std::optional<uint64_t> to_u64(std::string_view s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int> to_int(std::string_view s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// strtod rather than from_chars: nccl-tests prints "nan", "inf" and "1.2e+03" through printf.
std::optional<double> to_double(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

// nccl-tests' own tolerance for the old `error` column (DeltaMaxValue(type) x (nranks - 1)): a reduction in
// floating point legitimately differs from the reference by rounding.
double error_tolerance(const std::string& type, int ranks) {
  double per_rank = 1e-200;
  if (type == "half" || type == "bfloat16" || type == "f8e4m3" || type == "f8e5m2") per_rank = 1e-2;
  if (type == "float") per_rank = 1e-5;
  if (type == "double") per_rank = 1e-12;
  return per_rank * std::max(ranks - 1, 0);
}

uint64_t word_size(const std::string& type) {
  if (type == "int8" || type == "uint8" || type == "char" || type == "f8e4m3" || type == "f8e5m2") return 1;
  if (type == "half" || type == "bfloat16") return 2;
  if (type == "int32" || type == "uint32" || type == "int" || type == "float") return 4;
  if (type == "int64" || type == "uint64" || type == "double") return 8;
  return 0;
}

// Compiled on first use rather than at program start: every nccl-autotune command would otherwise pay for
// them (about 1.5 ms, a third of what `run` adds to a job launch), and only log reading uses them.
struct Patterns {
  const std::regex nccl_version{R"(NCCL version (\d+\.\d+\.\d+))"};
  const std::regex env_algo{R"(NCCL_ALGO set by environment to (\S+))"};
  const std::regex env_proto{R"(NCCL_PROTO set by environment to (\S+))"};
  const std::regex n_nodes{R"(\bnNodes (\d+))"};
  const std::regex tests_version{R"(^#\s*nccl-tests version (\S+)(?:.*nccl-library=(\d+))?)"};
  const std::regex program{R"(^#\s*Collective test starting:\s*(\S+))"};
  const std::regex concluded{R"(^#\s*Collective test concluded:\s*(\S+))"};
  const std::regex bench_header{
      R"(^#\s*nccl-autotune bench: ranks (\d+) nodes (\d+) forced (\S+) source (measured|simulated|standin) nccl (\S+)\s*$)"};
  // An old harness's announcement of the next run: "Running: mpirun -np 16 -x NCCL_ALGO=Ring
  // ./all_reduce_perf".
  const std::regex running_env{R"(\b(NCCL_ALGO|NCCL_PROTO)=([^\s;'"]+))"};
  const std::regex thread_line{
      R"(^#\s*nThread (\d+) nGpus (\d+) minBytes (\d+) maxBytes (\d+) step: (\d+)\((factor|bytes)\) warmup iters: (\d+) iters: (\d+))"};
  const std::regex validation{R"(validation: (\d+))"};
  const std::regex graph{R"(graph: (\d+))"};
  const std::regex out_of_bounds{R"(^#\s*Out of bounds values\s*:\s*(\d+))"};
  const std::regex avg_busbw{R"(^#\s*Avg bus bandwidth\s*:\s*(\S+))"};
  const std::regex timestamp{R"(^\d{4}-\d{2}-\d{2}$)"};
};

const Patterns& patterns() {
  static const Patterns p;
  return p;
}

// Where NCCL's own line starts in `line` and how long its host name is: the leftmost match of
// host:pid:tid [dev] NCCL (INFO|WARN|TRACE|ABORT|VERSION), the host being what holds no blank, ':', '[' or
// ']'. By hand, not std::regex: a log at scale (NCCL_DEBUG=INFO) is mostly such lines.
std::optional<std::pair<size_t, size_t>> find_nccl_line(std::string_view line) {
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  const auto host_char = [](char c) { return !is_blank(c) && c != ':' && c != '[' && c != ']'; };
  // Steps back from `p` over at least one character that `is` accepts; npos when there is none.
  const auto back = [&](size_t p, auto is) {
    size_t q = p;
    while (q > 0 && is(line[q - 1])) --q;
    return q == p ? std::string_view::npos : q;
  };
  constexpr std::string_view kAnchor = "] NCCL ";
  for (size_t at = line.find(kAnchor); at != std::string_view::npos; at = line.find(kAnchor, at + 1)) {
    const std::string_view level = line.substr(at + kAnchor.size());
    if (!level.starts_with("INFO") && !level.starts_with("WARN") && !level.starts_with("TRACE") &&
        !level.starts_with("ABORT") && !level.starts_with("VERSION"))
      continue;
    const size_t dev = back(at, digit);
    if (dev == std::string_view::npos || dev < 2 || line[dev - 1] != '[' || line[dev - 2] != ' ') continue;
    const size_t tid = back(dev - 2, digit);
    if (tid == std::string_view::npos || tid == 0 || line[tid - 1] != ':') continue;
    const size_t pid = back(tid - 1, digit);
    if (pid == std::string_view::npos || pid == 0 || line[pid - 1] != ':') continue;
    const size_t host = back(pid - 1, host_char);
    if (host != std::string_view::npos) return std::pair{host, pid - 1 - host};
  }
  return std::nullopt;
}

struct Layout {
  int size = -1, count = -1, type = -1, redop = -1, root = -1;
  int oop = -1, inplace = -1;  // index of each half's time column; algbw, busbw, check follow
  int used = -1;               // bench's algo/proto/channels column
  size_t values = 0;           // columns a complete row has, timestamp excluded
  bool timestamp = false;

  // Every named column, and each half's algbw, busbw and check after its time, lies inside a row.
  bool complete() const {
    const auto inside = [this](int index, int following) {
      return index >= 0 && static_cast<size_t>(index + following) < values;
    };
    return inside(size, 0) && inside(count, 0) && inside(type, 0) && (redop < 0 || inside(redop, 0)) &&
           (root < 0 || inside(root, 0)) && inside(oop, 3) && inside(inplace, 3);
  }
};

Layout layout_of(const std::vector<std::string>& columns) {
  Layout l;
  for (size_t i = 0; i < columns.size(); ++i) {
    const std::string& c = columns[i];
    int idx = static_cast<int>(i);
    if (c == "size") l.size = idx;
    if (c == "count") l.count = idx;
    if (c == "type") l.type = idx;
    if (c == "redop") l.redop = idx;
    if (c == "root") l.root = idx;
    if (c == "time" || c == "cputime") (l.oop < 0 ? l.oop : l.inplace) = idx;
    if (c == "timestamp") l.timestamp = true;
    if (c == "algo/proto/channels") l.used = idx;
  }
  l.values = columns.size() - (l.timestamp ? 1 : 0);
  return l;
}

// "#  Rank  3 Group  0 Pid 31003 on gpu-a01 device  3 [0x4e] NVIDIA H100 80GB HBM3": what the pattern
// ^#\s+Rank\s+(\d+)(\s+Group\s+\d+)?\s+Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*)$ takes
// from it, by hand (a log at scale has a rank line per rank and test).
struct RankFields {
  std::string_view rank, pid, host, device, bus, name;
};

std::optional<RankFields> rank_fields(std::string_view t) {
  size_t i = 0;
  const auto next = [&]() {
    while (i < t.size() && is_blank(t[i])) ++i;
    const size_t start = i;
    while (i < t.size() && !is_blank(t[i])) ++i;
    return t.substr(start, i - start);
  };
  const auto digits = [](std::string_view w) {
    return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  RankFields f;
  if (next() != "#" || next() != "Rank" || !digits(f.rank = next())) return std::nullopt;
  std::string_view word = next();
  if (word == "Group" && !digits(next())) return std::nullopt;
  if (word == "Group") word = next();
  if (word != "Pid" || !digits(f.pid = next()) || next() != "on" || (f.host = next()).empty() ||
      next() != "device" || !digits(f.device = next()))
    return std::nullopt;
  while (i < t.size() && is_blank(t[i])) ++i;
  const size_t close = t.find(']', i);
  if (i == t.size() || t[i] != '[' || close == std::string_view::npos) return std::nullopt;
  f.bus = t.substr(i + 1, close - i - 1);
  f.name = t.substr(close + 1);
  return f;
}

class Parser {
 public:
  Parser(std::string file, std::optional<std::string> collective) : file_(std::move(file)) {
    log_.file = file_;
    if (collective) {
      auto name = nccl_tests_collective_name(*collective);
      if (!name)
        throw InputError(
            "<arguments>", 0,
            "expected a collective (allreduce, allgather, reducescatter, broadcast, reduce, alltoall, "
            "sendrecv, gather, scatter), found '" +
                *collective + "'");
      log_.collective = *name;
    }
  }

  NcclTestsLog run(std::string_view text, int first_line) {
    log_.first_line = first_line;
    int line_no = first_line - 1;
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos) nl = text.size();
      std::string line(text.substr(pos, nl - pos));
      ++line_no;
      pos = nl + 1;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (nl == text.size() && line.empty()) {
        --line_no;  // the text ended with its last newline
        break;
      }
      take(line, line_no);
    }
    log_.last_line = std::max(line_no, first_line);
    finish(log_.last_line);
    return std::move(log_);
  }

 private:
  void warn(int line, std::string text) { log_.warnings.push_back({line, std::move(text)}); }

  void take(std::string line, int line_no) {
    if (std::string_view bare = strip_launcher_prefix(line); bare.size() != line.size())
      line = std::string(bare);
    // NCCL's own lines: they may start in the middle of a row that nccl-tests was printing in pieces.
    if (const auto found = find_nccl_line(line)) {
      size_t at = found->first;
      std::string before = line.substr(0, at);
      // Glued to a row ("-1gpu-a02:4211:4217 [3] NCCL INFO ..."), the host name pattern also swallows the
      // row's last characters: the host names of the rank lines tell where the NCCL line really starts.
      std::string host = line.substr(at, found->second);
      for (const auto& r : log_.header.ranks) {
        if (host.size() > r.host.size() && host.ends_with(r.host)) {
          size_t extra = host.size() - r.host.size();
          before += host.substr(0, extra);
          at += extra;
          break;
        }
      }
      std::string nccl = line.substr(at);
      nccl_line(nccl);
      if (!trim(before).empty()) {
        if (fragment_.empty()) fragment_line_ = line_no;
        fragment_ += before;
      }
      return;
    }
    std::string t(trim(line));
    if (t.empty()) return;
    if (t[0] == '#') {
      comment(t, line_no);
      return;
    }
    if (t.rfind("Running:", 0) == 0) {
      running(t);
      return;
    }
    if (!fragment_.empty()) {
      std::string joined = fragment_ + " " + line;
      int start = fragment_line_;
      fragment_.clear();
      if (try_row(joined, start, false)) return;
      warn(start, "a row interrupted by other output could not be put back together; ignored");
    }
    try_row(line, line_no, true);
  }

  // The header's numbers are digit runs the patterns matched; one too long for its type is an input error,
  // never an exception from the standard library.
  int header_int(std::string_view digits, int line_no) const {
    if (auto v = to_int(digits)) return *v;
    throw InputError(file_, line_no,
                     "expected a number up to 2147483647, found '" + std::string(digits) + "'");
  }
  int header_int(const std::ssub_match& digits, int line_no) const {
    return header_int(digits.str(), line_no);
  }
  uint64_t header_u64(const std::ssub_match& digits, int line_no) const {
    if (auto v = to_u64(digits.str())) return *v;
    throw InputError(file_, line_no,
                     "expected a byte count up to 18446744073709551615, found '" + digits.str() + "'");
  }

  void nccl_line(const std::string& s) {
    std::smatch m;
    auto has = [&](const char* literal) { return s.find(literal) != std::string::npos; };
    if (log_.nccl_version.empty() && has("NCCL version") && std::regex_search(s, m, patterns().nccl_version))
      log_.nccl_version = m[1];
    if (has("NCCL_ALGO set") && std::regex_search(s, m, patterns().env_algo)) log_.env_algo = m[1];
    if (has("NCCL_PROTO set") && std::regex_search(s, m, patterns().env_proto)) log_.env_proto = m[1];
    if (has("nNodes") && std::regex_search(s, m, patterns().n_nodes)) {
      if (auto nodes = to_int(m[1].str())) log_.nccl_nodes = *nodes;  // NCCL's own line: a wild one is noise
    }
    if (s.find("NCCL WARN") != std::string::npos) warnings_from_nccl_++;
  }

  // The program a `Running:` line starts, and what it exports (NCCL's own "set by environment" lines win).
  void running(const std::string& t) {
    seen_header_ = true;
    for (const std::string& word : split_whitespace(t)) {
      std::string base = std::filesystem::path(word).filename().string();
      if (log_.header.program.empty() && base.size() > 5 && base.ends_with("_perf") &&
          nccl_tests_collective_name(base))
        log_.header.program = base;
    }
    for (auto it = std::sregex_iterator(t.begin(), t.end(), patterns().running_env);
         it != std::sregex_iterator(); ++it) {
      auto& slot = (*it)[1] == "NCCL_ALGO" ? running_algo_ : running_proto_;
      slot = (*it)[2].str();
    }
  }

  void comment(const std::string& t, int line_no) {
    std::smatch m;
    auto& h = log_.header;
    // std::regex is slow: each pattern only where its literal is (a log at scale has a rank line per rank).
    const auto has = [&](const char* literal) { return t.find(literal) != std::string::npos; };
    if (t.find("nccl-autotune bench:") != std::string::npos &&
        std::regex_search(t, m, patterns().bench_header)) {
      seen_header_ = true;
      log_.stated_ranks = header_int(m[1], line_no);
      log_.stated_nodes = header_int(m[2], line_no);
      log_.forced = m[3].str();
      log_.source = m[4].str();
      if (std::regex_match(m[5].str(), std::regex(R"(\d+\.\d+\.\d+)"))) log_.nccl_version = m[5].str();
    } else if (has("Collective test concluded") && std::regex_search(t, m, patterns().concluded)) {
      if (h.program.empty()) h.program = m[1];
    } else if (has("nccl-tests version") && std::regex_search(t, m, patterns().tests_version)) {
      seen_header_ = true;
      h.tests_version = m[1];
      if (m[2].matched) h.nccl_library = header_int(m[2], line_no);
    } else if (has("Collective test starting") && std::regex_search(t, m, patterns().program)) {
      seen_header_ = true;
      h.program = m[1];
    } else if (has("nThread") && std::regex_search(t, m, patterns().thread_line)) {
      seen_header_ = true;
      h.threads = header_int(m[1], line_no);
      h.gpus_per_thread = header_int(m[2], line_no);
      h.min_bytes = header_u64(m[3], line_no);
      h.max_bytes = header_u64(m[4], line_no);
      h.step = header_u64(m[5], line_no);
      h.step_is_factor = m[6] == "factor";
      h.warmup_iters = header_int(m[7], line_no);
      h.iters = header_int(m[8], line_no);
      if (std::regex_search(t, m, patterns().validation)) h.validation = header_int(m[1], line_no);
      if (std::regex_search(t, m, patterns().graph)) h.graph = header_int(m[1], line_no);
    } else if (const auto f = has("Rank") ? rank_fields(t) : std::nullopt) {
      NcclTestsRank r;
      r.rank = header_int(f->rank, line_no);
      r.pid = header_int(f->pid, line_no);
      r.host = f->host;
      r.device = header_int(f->device, line_no);
      r.bus_id = f->bus;
      r.gpu_name = trim(f->name);
      h.ranks.push_back(std::move(r));
    } else if (has("Out of bounds") && std::regex_search(t, m, patterns().out_of_bounds)) {
      log_.footer.out_of_bounds = header_int(m[1], line_no);
      footer_line_ = line_no;
    } else if (has("Avg bus bandwidth") && std::regex_search(t, m, patterns().avg_busbw)) {
      log_.footer.avg_busbw_gbps = to_double(m[1]);
      footer_line_ = line_no;
    } else if (t.rfind("# error:", 0) == 0) {
      warn(line_no, "nccl-tests reported: " + std::string(trim(t.substr(8))));
    } else if (t.find("Reducing maxBytes") != std::string::npos) {
      warn(line_no,
           "nccl-tests reduced the size range for lack of GPU memory: " + std::string(trim(t.substr(1))));
    } else {
      auto tokens = split_whitespace(t.substr(1));
      bool is_columns = std::find(tokens.begin(), tokens.end(), "size") != tokens.end() &&
                        std::find(tokens.begin(), tokens.end(), "busbw") != tokens.end();
      if (is_columns) {
        if (!h.columns.empty() && h.columns != tokens)
          warn(line_no, "a second result table with other columns; its rows are read with the new columns");
        h.columns = tokens;
        h.old_error_column = std::find(tokens.begin(), tokens.end(), "error") != tokens.end();
        layout_ = layout_of(tokens);
        if (!layout_.complete())
          throw InputError(file_, line_no,
                           "expected an nccl-tests table header (size count type ... time algbw busbw ... "
                           "time algbw busbw), found '" +
                               t + "'");
        table_line_ = line_no;
      }
    }
  }

  std::optional<NcclTestsResult> half(const std::vector<std::string>& tok, int at, const std::string& type) {
    NcclTestsResult r;
    auto time = to_double(tok[at]);
    auto alg = to_double(tok[at + 1]);
    auto bus = to_double(tok[at + 2]);
    if (!time || !alg || !bus) return std::nullopt;
    r.time_us = *time;
    r.algbw_gbps = *alg;
    r.busbw_gbps = *bus;
    const std::string& check = tok[at + 3];
    if (check != "N/A") {
      auto v = to_double(check);
      if (!v) return std::nullopt;
      r.check = *v;
      r.wrong = log_.header.old_error_column
                    ? (*v > error_tolerance(type, ranks_for_tolerance()) || std::isnan(*v))
                    : *v > 0;
    }
    return r;
  }

  int ranks_for_tolerance() const {
    int n = log_.ranks();
    return n > 0 ? n : 2;
  }

  // Returns whether the line was a row (complete or cut). `last_chance`: a line that is no row and no known
  // noise is ignored silently unless it looks like a cut row.
  bool try_row(const std::string& line, int line_no, bool last_chance) {
    if (layout_.oop < 0) return false;
    auto tok = split_whitespace(line);
    if (tok.empty()) return false;
    // A row whose size is negative is a row nonetheless (a corrupted log): said, not dropped unseen.
    if (tok[0].size() > 1 && tok[0][0] == '-' && std::isdigit(static_cast<unsigned char>(tok[0][1])))
      return last_chance && bad_row(line_no, line);
    if (!to_u64(tok[0])) return false;
    if (layout_.timestamp && tok.size() >= layout_.values + 2 &&
        std::regex_match(tok[layout_.values], patterns().timestamp))
      tok.resize(layout_.values);
    if (tok.size() < layout_.values) {
      if (!last_chance) return false;
      // A row printed in part: the job stopped (or was killed) while measuring this size.
      pending_cut_ = line_no;
      pending_cut_text_ = trim(line);
      return true;
    }
    if (tok.size() > layout_.values) {
      warn(line_no, "ignored a row with " + std::to_string(tok.size()) + " fields where the table has " +
                        std::to_string(layout_.values));
      return true;
    }
    NcclTestsRow row;
    row.line = line_no;
    auto bytes = to_u64(tok[layout_.size]);
    auto count = to_u64(tok[layout_.count]);
    row.type = tok[layout_.type];
    if (layout_.redop >= 0) row.redop = tok[layout_.redop];
    if (layout_.root >= 0) {
      auto root = to_int(tok[layout_.root]);
      if (!root) return bad_row(line_no, line);
      row.root = *root;
    }
    if (!bytes || !count) return bad_row(line_no, line);
    row.bytes = *bytes;
    row.count = *count;
    if (layout_.used >= 0) row.used = tok[layout_.used];
    auto oop = half(tok, layout_.oop, row.type);
    auto inp = half(tok, layout_.inplace, row.type);
    if ((!oop || !inp) && runners::parse_outcome(row.used)) {
      warn(line_no,
           "bench could not measure " + std::to_string(row.bytes) + " B (" + row.used + "): not imported");
      ++unmeasured_;
      return true;
    }
    if (!oop || !inp) return bad_row(line_no, line);
    row.out_of_place = *oop;
    row.in_place = *inp;
    log_.rows.push_back(std::move(row));
    pending_cut_ = 0;
    return true;
  }

  bool bad_row(int line_no, const std::string& line) {
    warn(line_no,
         "ignored a row whose values are not byte counts and numbers: '" + printable(trim(line)) + "'");
    return true;
  }

  void finish(int last_line) {
    if (!log_.env_algo) log_.env_algo = running_algo_;
    if (!log_.env_proto) log_.env_proto = running_proto_;
    if (!seen_header_ && layout_.oop < 0)
      throw InputError(file_, log_.first_line,
                       "expected nccl-tests output (a '# nThread N nGpus N minBytes ...' header and a "
                       "'size count type ... busbw' table), found neither");
    if (layout_.oop < 0)
      throw InputError(
          file_, last_line,
          "the nccl-tests log ends before its result table (no 'size count type ... busbw' header)");
    if (log_.rows.empty() && unmeasured_ > 0)
      throw InputError(file_, log_.first_line,
                       "bench measured none of the " + std::to_string(unmeasured_) +
                           " sizes of this test (see the reason under each row)");
    if (log_.rows.empty())
      throw InputError(file_, last_line, "the nccl-tests log ends before the first result row");
    if (pending_cut_ || !fragment_.empty()) {
      int at = pending_cut_ ? pending_cut_ : fragment_line_;
      warn(at, "the last row is incomplete (the run stopped while measuring it); ignored");
    }
    if (!log_.footer.avg_busbw_gbps && !log_.footer.out_of_bounds) {
      log_.truncated = true;
      warn(last_line,
           "the log stops before nccl-tests' footer (Out of bounds values, Avg bus bandwidth): "
           "truncated; " +
               std::to_string(log_.rows.size()) + " complete rows kept");
    }
    size_t wrong = std::count_if(log_.rows.begin(), log_.rows.end(), [](const auto& r) { return r.wrong(); });
    if (wrong > 0)
      warn(log_.rows.front().line, std::to_string(wrong) +
                                       " rows have wrong results: kept, flagged, never used "
                                       "for rules");
    if (log_.footer.out_of_bounds && *log_.footer.out_of_bounds > 0 && wrong == 0)
      warn(footer_line_, "nccl-tests counted " + std::to_string(*log_.footer.out_of_bounds) +
                             " out-of-bounds values but no row shows which size: every row is kept");
    if (warnings_from_nccl_ > 0) warn(0, std::to_string(warnings_from_nccl_) + " NCCL WARN lines in the log");
    decide_collective(last_line);
  }

  void decide_collective(int last_line) {
    if (!log_.collective.empty()) return;
    if (auto n = nccl_tests_collective_name(log_.header.program)) {
      log_.collective = *n;
      return;
    }
    std::string stem = std::filesystem::path(file_).filename().string();
    if (auto n = nccl_tests_collective_name(stem)) {
      log_.collective = *n;
      return;
    }
    // The table's shape, where it can only be one collective.
    const NcclTestsRow& r = log_.rows.front();
    bool op = !r.redop.empty() && r.redop != "none";
    if (r.root >= 0) {
      log_.collective = op ? "reduce" : "broadcast";
      return;
    }
    uint64_t ws = word_size(r.type);
    bool old = log_.header.old_error_column;
    if (old && ws > 0 && r.count > 0 && r.bytes == r.count * ws) {
      // Old tables print `redop` only for reductions, `root` only for rooted collectives.
      if (layout_.redop < 0 && layout_.root < 0) log_.collective = "sendrecv";
      if (layout_.redop >= 0 && layout_.root < 0) log_.collective = "allreduce";
      if (!log_.collective.empty()) return;
    }
    if (old && layout_.redop < 0 && layout_.root < 0 && ws > 0 && r.count > 0 && r.bytes > r.count * ws) {
      log_.collective = "allgather";
      return;
    }
    throw InputError(
        file_, last_line,
        "cannot tell which collective this nccl-tests log measured (it does not name its program): "
        "name it with --collective, or name the file after the program (all_reduce_perf.log)");
  }

  std::string file_;
  NcclTestsLog log_;
  Layout layout_;
  bool seen_header_ = false;
  int table_line_ = 0;
  int footer_line_ = 0;
  int pending_cut_ = 0;
  std::string pending_cut_text_;
  std::string fragment_;
  int fragment_line_ = 0;
  int warnings_from_nccl_ = 0;
  int unmeasured_ = 0;  // bench rows that hold an outcome instead of numbers
  std::optional<std::string> running_algo_, running_proto_;
};

}  // namespace

int NcclTestsLog::ranks() const {
  if (stated_ranks) return *stated_ranks;
  // Not threads x GPUs from the nThread line: under mpirun that line counts one process's GPUs only.
  int top = 0;
  for (const auto& r : header.ranks) top = std::max(top, r.rank + 1);
  return top;
}

std::string NcclTestsLog::name() const {
  std::string lines = first_line == last_line ? std::to_string(first_line)
                                              : std::to_string(first_line) + "-" + std::to_string(last_line);
  return file + ":" + lines + " (" + (header.program.empty() ? collective : header.program) + ")";
}

int NcclTestsLog::hosts() const {
  std::set<std::string> names;
  for (const auto& r : header.ranks) names.insert(r.host);
  return static_cast<int>(names.size());
}

std::optional<nccl::Collective> NcclTestsLog::nccl_collective() const {
  auto op = operation();
  return op ? nccl::as_collective(*op) : std::nullopt;
}

std::optional<nccl::Operation> NcclTestsLog::operation() const {
  return nccl::parse_operation(collective);
}

std::optional<std::string> nccl_tests_collective_name(std::string_view text) {
  std::string s;
  for (char c : text)
    if (std::isalnum(static_cast<unsigned char>(c)))
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // Longest names first: "reducescatter" and "allreduce" both contain "reduce".
  // "scatter" and "gather" after the collectives that contain them.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kNames = {{
      {"reducescatter", "reducescatter"},
      {"allreduce", "allreduce"},
      {"allgather", "allgather"},
      {"alltoall", "alltoall"},
      {"sendrecv", "sendrecv"},
      {"broadcast", "broadcast"},
      {"scatter", "scatter"},
      {"gather", "gather"},
      {"reduce", "reduce"},
  }};
  for (const auto& [key, name] : kNames)
    if (s.find(key) != std::string::npos) return std::string(name);
  return std::nullopt;
}

NcclTestsLog parse_nccl_tests_log(std::string_view text, const std::string& file,
                                  std::optional<std::string> collective, int first_line) {
  return Parser(file, std::move(collective)).run(text, first_line);
}

std::string_view strip_launcher_prefix(std::string_view line) {
  auto digits = [&](size_t at) {
    size_t end = at;
    while (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end]))) ++end;
    return end;
  };
  if (line.starts_with('[')) {  // [1,0]<stdout>: or [1,0]<stderr>:
    size_t a = digits(1);
    if (a > 1 && a < line.size() && line[a] == ',') {
      size_t b = digits(a + 1);
      for (std::string_view tag : {"]<stdout>:", "]<stderr>:"})
        if (b > a + 1 && line.substr(b).starts_with(tag)) return line.substr(b + tag.size());
    }
    return line;
  }
  size_t at = 0;
  while (at < line.size() && line[at] == ' ') ++at;
  size_t end = digits(at);
  if (end > at && line.substr(end).starts_with(": ")) return line.substr(end + 2);
  return line;
}

std::string bench_header_line(int ranks, int nodes, const std::string& forced, const std::string& source,
                              const std::string& nccl_version) {
  return "# nccl-autotune bench: ranks " + std::to_string(ranks) + " nodes " + std::to_string(nodes) +
         " forced " + forced + " source " + source + " nccl " + (nccl_version.empty() ? "-" : nccl_version);
}

NcclTestsLog read_nccl_tests_log(const std::filesystem::path& path, std::optional<std::string> collective) {
  return parse_nccl_tests_log(read_file(path, kLogInput), path.string(), std::move(collective));
}

}  // namespace autotune::nccl_tests
