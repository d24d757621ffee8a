// The HTML report's structure: one series path per candidate per chart, labelled axes, rule bands, failed
// candidates, the source banner, escaping; and the terminal table format.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <regex>
#include <set>
#include <string>

#include "common/input_file.hpp"
#include "report/axis_ticks.hpp"
#include "report/chart_palette.hpp"
#include "report/report_html.hpp"
#include "report/svg_chart.hpp"
#include "report/table_format.hpp"

using namespace autotune;
using namespace autotune::search;
using namespace autotune::report;
using namespace autotune::runners;

namespace {

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

JournalRecord record(const Candidate& c, uint64_t bytes, double us, Outcome outcome = Outcome::ok) {
  JournalRecord r;
  r.setting = ProcessSetting{"default", {}};
  r.scale = Scale{1, 8};
  r.source = "simulated";
  Measurement& m = r.measurement;
  m.request.collective = nccl::Collective::allreduce;
  m.request.bytes = bytes;
  m.request.candidate = c;
  m.outcome = outcome;
  if (outcome == Outcome::ok)
    m.times_us = {us * 0.99, us, us, us, us * 1.01};
  else
    m.detail = "2048 wrong elements";
  return r;
}

// Three candidates at 1 KiB .. 1 MiB; tree/ll is clearly faster than the default at small sizes, ring/ll128
// gives wrong results at the two largest.
ReportData sample() {
  ReportData d;
  JournalHeader h;
  h.source = "simulated";
  h.cluster = "lab <a&b>";
  h.fingerprint = "abc123";
  h.nodes = 1;
  h.gpus_per_node = 8;
  d.header = h;
  Candidate def, tree_ll{nccl::Algorithm::tree, nccl::Protocol::ll, 0},
      ring_simple{nccl::Algorithm::ring, nccl::Protocol::simple, 0},
      ring_ll128{nccl::Algorithm::ring, nccl::Protocol::ll128, 0};
  for (uint64_t b = 1024; b <= (1u << 20); b *= 4) {
    double base = 20 + b / 100000.0;
    d.records.push_back(record(def, b, base));
    d.records.push_back(record(tree_ll, b, b <= 16384 ? base * 0.7 : base * 1.5));
    d.records.push_back(record(ring_simple, b, base * 1.2));
    d.records.push_back(b >= 262144 ? record(ring_ll128, b, 0, Outcome::wrong_result)
                                    : record(ring_ll128, b, base * 1.1));
  }
  return d;
}

}  // namespace

TEST_CASE("each candidate has one path in the bandwidth chart and one in the speedup chart") {
  std::string html = render_report_html(sample());
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(count(html, "<svg ") == 2);
  CHECK(count(html, "data-series=\"NCCL default\"") == 1);  // not in the speedup chart: it is the reference
  CHECK(count(html, "data-series=\"tree/ll\"") == 2);
  CHECK(count(html, "data-series=\"ring/simple\"") == 2);
  CHECK(count(html, "data-series=\"ring/ll128\"") == 2);
  CHECK(count(html, "<path class=\"series") == 7);
  CHECK(count(html, "class=\"series default\"") == 1);
  CHECK(count(html, "class=\"axis-label x-label\"") == 2);
  CHECK(count(html, "class=\"axis-label y-label\"") == 2);
  CHECK(html.find("bus bandwidth (GB/s, log scale)") != std::string::npos);
  CHECK(html.find("message size (bytes, log scale)") != std::string::npos);
  CHECK(html.find(">1 KiB<") != std::string::npos);  // tick labels in human units
  // Self-contained: no scripts, nothing fetched.
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));
  CHECK(html.find("https://") == std::string::npos);
}

TEST_CASE("the derived rule is shaded and tabled, failures and the source are shown") {
  std::string html = render_report_html(sample());
  // tree/ll wins by 30% at 1 KiB .. 16 KiB: one rule, one band per chart.
  CHECK(count(html, "class=\"rule-band\"") == 2);
  std::regex rule_row(R"(<tr><td>allreduce</td>.*<td>tree/ll</td>.*\+[0-9.]+%)");
  CHECK(std::regex_search(html, rule_row));
  CHECK(html.find("SIMULATED") != std::string::npos);
  CHECK(html.find("<table class=\"failed\">") != std::string::npos);
  CHECK(html.find("wrong_result") != std::string::npos);
  CHECK(html.find("256 KiB, 1 MiB") != std::string::npos);
  CHECK(html.find("2048 wrong elements") != std::string::npos);
  // Text from files is escaped.
  CHECK(html.find("lab &lt;a&amp;b&gt;") != std::string::npos);
  CHECK(html.find("lab <a&b>") == std::string::npos);
}

TEST_CASE("a profile's rules replace derived ones, a profile alone renders its rule table") {
  ReportData d = sample();
  profiles::Profile p;
  profiles::Rule r;
  r.collective = nccl::Collective::allreduce;
  r.min_bytes = 4096;
  r.max_bytes = 65536;
  r.algorithm = nccl::Algorithm::ring;
  r.protocol = nccl::Protocol::ll;
  r.busbw_gbps = 12.0;
  r.default_busbw_gbps = 10.0;
  p.rules.push_back(r);
  d.profile = p;
  std::string html = render_report_html(d);
  CHECK(html.find("<td>ring/ll</td>") != std::string::npos);
  CHECK(html.find("<td>tree/ll</td>") == std::string::npos);
  CHECK(html.find("+20.0%") != std::string::npos);
  ReportData alone;
  alone.profile = p;
  std::string only = render_report_html(alone);
  CHECK(only.find("<td>ring/ll</td>") != std::string::npos);
  CHECK(count(only, "<svg ") == 0);
}

TEST_CASE("write_report writes the page to a file") {
  auto path =
      std::filesystem::temp_directory_path() / ("autotune-report-" + std::to_string(::getpid()) + ".html");
  ReportData d = sample();
  JournalContents j{d.header, d.records, {}, {}};
  write_report(path, j, std::nullopt);
  CHECK(read_file(path) == render_report_html(d));
  std::filesystem::remove(path);
}

TEST_CASE("svg chart: log axis ticks, escaping, emphasised series drawn last") {
  SvgChart c;
  c.title = "t & t";
  c.series.push_back({"a", "#f00", true, {{8, 1}, {1024, 2}}});
  c.series.push_back({"b<", "#00f", false, {{8, 2}, {1024, 1}}});
  std::string svg = render_svg(c);
  CHECK(svg.find("t &amp; t") != std::string::npos);
  CHECK(svg.find("data-series=\"b&lt;\"") < svg.find("data-series=\"a\""));
  CHECK(svg.find(">8<") != std::string::npos);
  CHECK(svg.find(">1024<") != std::string::npos);
}

TEST_CASE("text tables align columns and format sizes for people") {
  TextTable t({"collective", "sizes", "busbw"}, {Align::left, Align::left, Align::right});
  t.add_row({"allreduce", human_size_range(1024, 65536), format_gbps(12.345)});
  t.add_row({"allgather", human_size_range(1 << 20, 1536u << 20), format_gbps(350)});
  CHECK(t.render() ==
        "collective  sizes            busbw\n"
        "----------  ---------------  -----\n"
        "allreduce   1 KiB - 64 KiB    12.3\n"
        "allgather   1 MiB - 1.5 GiB  350.0\n");
  CHECK_THROWS(t.add_row({"a", "b", "c", "d"}));
  CHECK(format_gain(0.123) == "+12.3%");
  CHECK(format_ratio(1.5) == "1.50x");
}

namespace {

std::vector<std::string> labels(const AxisTicks& a) {
  std::vector<std::string> out;
  for (double t : a.ticks) out.push_back(tick_label(t));
  return out;
}

// The y tick labels and the series' stroke colours of each chart in a page, in order.
struct ChartParts {
  std::vector<std::string> y_ticks;
  std::vector<std::string> strokes;
};
std::vector<ChartParts> charts_of(const std::string& html) {
  std::vector<ChartParts> out;
  static const std::regex tick(R"re(<text class="y-tick"[^>]*>([^<]*)</text>)re");
  static const std::regex stroke(
      R"re(<path class="series[^"]*" data-series="[^"]*" d="[^"]*" fill="none" stroke="([^"]*)")re");
  for (size_t at = html.find("<svg "); at != std::string::npos; at = html.find("<svg ", at + 1)) {
    const std::string svg = html.substr(at, html.find("</svg>", at) - at);
    ChartParts p;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator(); ++it)
      p.y_ticks.push_back((*it)[1]);
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), stroke); it != std::sregex_iterator(); ++it)
      p.strokes.push_back((*it)[1]);
    out.push_back(p);
  }
  return out;
}

}  // namespace

TEST_CASE("linear ticks are multiples of one 1, 2 or 5 x 10^k step, the ends on ticks") {
  // The speedup axis that read 0.1, 0.6, 1.1 before.
  CHECK(labels(linear_ticks(0.1, 1.1)) ==
        std::vector<std::string>{"0", "0.2", "0.4", "0.6", "0.8", "1", "1.2"});
  CHECK(labels(linear_ticks(0, 480)) == std::vector<std::string>{"0", "100", "200", "300", "400", "500"});
  CHECK(labels(linear_ticks(0.83, 1.27, 6)) ==
        std::vector<std::string>{"0.8", "0.9", "1", "1.1", "1.2", "1.3"});
  CHECK(labels(linear_ticks(0, 0.0031)) == std::vector<std::string>{"0", "0.001", "0.002", "0.003", "0.004"});
  auto flat = linear_ticks(2, 2);
  CHECK(flat.lo < 2);
  CHECK(flat.hi > 2);
  for (double lo : {0.0, 0.07, 3.0, 17.0})
    for (double hi : {lo + 0.013, lo + 1.7, lo + 990.0}) {
      AxisTicks a = linear_ticks(lo, hi);
      INFO(lo << " .. " << hi);
      CHECK(a.lo <= lo);
      CHECK(a.hi >= hi);
      REQUIRE(a.ticks.size() >= 2);
      CHECK(a.ticks.size() <= 11);
      CHECK(a.ticks.front() == a.lo);
      CHECK(a.ticks.back() == a.hi);
      const double step = a.ticks[1] - a.ticks[0];
      const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
      CHECK(
          (std::abs(mantissa - 1) < 1e-6 || std::abs(mantissa - 2) < 1e-6 || std::abs(mantissa - 5) < 1e-6));
      for (double t : a.ticks) CHECK(std::abs(t / step - std::round(t / step)) < 1e-6);
    }
}

TEST_CASE("log ticks are 1, 2 and 5 x 10^k, or the decades alone over a wide range") {
  CHECK(labels(log_ticks(3, 400)) ==
        std::vector<std::string>{"2", "5", "10", "20", "50", "100", "200", "500"});
  CHECK(labels(log_ticks(0.04, 480)) == std::vector<std::string>{"0.01", "0.1", "1", "10", "100", "1000"});
  CHECK(labels(log_ticks(1, 1)) == std::vector<std::string>{"1", "2"});
  CHECK(labels(log_ticks(0.2, 0.2)) == std::vector<std::string>{"0.2", "0.5"});
  CHECK(labels(log_ticks(10, 100)) == std::vector<std::string>{"10", "20", "50", "100"});
}

TEST_CASE("no two lines of a chart share a colour, whatever their number") {
  for (size_t n : {1u, 10u, 11u, 20u, 32u}) {
    auto colors = distinct_colors(n);
    REQUIRE(colors.size() == n);
    for (size_t i = 0; i < n; ++i) {
      // None passes for NCCL's default (black) or for the page (white).
      CHECK(color_difference(colors[i], "#000000") >= 40);
      CHECK(color_difference(colors[i], "#ffffff") >= 20);
      for (size_t j = i + 1; j < n; ++j) {
        INFO(n << " colours: " << colors[i] << " and " << colors[j]);
        CHECK(color_difference(colors[i], colors[j]) >= 25);
      }
    }
  }
  auto many = distinct_colors(64);
  CHECK(std::set<std::string>(many.begin(), many.end()).size() == 64);
  CHECK(distinct_colors(10) == std::vector<std::string>(many.begin(), many.begin() + 10));  // stable prefix
  CHECK(color_difference("#ff0000", "#ff0000") == 0);
  CHECK(color_difference("#000000", "#ffffff") == Approx(100).margin(0.1));
}

TEST_CASE("a chart of fourteen candidates draws fourteen colours, its busbw axis is logarithmic") {
  ReportData d;
  JournalHeader h;
  h.source = "simulated";
  d.header = h;
  std::vector<Candidate> candidates = {Candidate{}};
  for (auto a : {nccl::Algorithm::ring, nccl::Algorithm::tree})
    for (auto p : {nccl::Protocol::ll, nccl::Protocol::ll128, nccl::Protocol::simple})
      for (int ch : {0, 8}) candidates.push_back(Candidate{a, p, ch});
  candidates.push_back(Candidate{nccl::Algorithm::nvls, nccl::Protocol::simple, 0});
  candidates.push_back(Candidate{nccl::Algorithm::nvls, nccl::Protocol::simple, 16});
  REQUIRE(candidates.size() == 15);
  for (size_t i = 0; i < candidates.size(); ++i)
    for (uint64_t b = 1024; b <= (64u << 20); b *= 8)
      d.records.push_back(record(candidates[i], b, 15 + b / 4e5 + i));
  const std::string html = render_report_html(d);
  auto parts = charts_of(html);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].strokes.size() == 15);
  CHECK(std::set<std::string>(parts[0].strokes.begin(), parts[0].strokes.end()).size() == 15);
  // busbw from about 0.06 to 1000 GB/s: decades only.
  CHECK(parts[0].y_ticks == std::vector<std::string>{"0.01", "0.1", "1", "10", "100", "1000"});
  // The speedup chart is linear around 1, at round values.
  for (const auto& t : parts[1].y_ticks) {
    INFO(t);
    CHECK(std::regex_match(t, std::regex(R"(0|0\.[0-9]|1|1\.[0-9]|[0-9]+)")));
  }
}

TEST_CASE("unsupported candidates are listed apart, folded, and never fill the failures table") {
  ReportData d = sample();
  Candidate collnet{nccl::Algorithm::collnet_direct, nccl::Protocol::simple, 0};
  for (int setting = 0; setting < 2; ++setting)
    for (Scale scale : {Scale{1, 8}, Scale{2, 16}})
      for (uint64_t b = 1024; b <= (1u << 20); b *= 4) {
        JournalRecord r = record(collnet, b, 0, Outcome::unsupported);
        r.setting =
            setting ? ProcessSetting{"hca-a", {{"NCCL_IB_HCA", "=mlx5_0"}}} : ProcessSetting{"default", {}};
        r.scale = scale;
        r.measurement.detail = "NCCL marked collnetdirect/simple unusable (no SHARP)";
        d.records.push_back(r);
      }
  const std::string html = render_report_html(d);
  const size_t failed = html.find("<table class=\"failed\">");
  REQUIRE(failed != std::string::npos);
  const std::string failed_table = html.substr(failed, html.find("</table>", failed) - failed);
  CHECK(failed_table.find("unsupported") == std::string::npos);
  CHECK(failed_table.find("wrong_result") != std::string::npos);
  CHECK(count(failed_table, "<tr>") == 2);  // the header and ring/ll128's wrong results
  CHECK(html.find("<h2>Not supported here</h2>") != std::string::npos);
  CHECK(html.find("1 candidate NCCL marked unusable on this cluster") != std::string::npos);
  const size_t folded = html.find("<details class=\"unsupported\">");
  REQUIRE(folded != std::string::npos);
  const std::string table = html.substr(folded, html.find("</details>", folded) - folded);
  CHECK(count(table, "<tr>") == 2);  // one row for 24 records: both scales, both settings
  CHECK(table.find("1x8 (8 ranks); 2x8 (16 ranks)") != std::string::npos);
  CHECK(table.find("default, hca-a") != std::string::npos);
  CHECK(table.find("(no SHARP)") != std::string::npos);
  // Without unsupported candidates the section is absent.
  CHECK(render_report_html(sample()).find("Not supported here") == std::string::npos);
}

TEST_CASE("size ticks are powers of two a round number of doublings apart") {
  auto exps = [](double lo, double hi) {
    std::vector<int> out;
    for (double t : log2_ticks(lo, hi)) out.push_back(static_cast<int>(std::log2(t)));
    return out;
  };
  CHECK(exps(1024, 1 << 20) == std::vector<int>{10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20});
  CHECK(exps(1024, 1u << 30) == std::vector<int>{10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30});  // 1K 4K .. 1G
  CHECK(exps(8, 1ull << 40) == std::vector<int>{5, 10, 15, 20, 25, 30, 35, 40});  // 32 B 1K 32K 1M
  CHECK(exps(3000, 5000) == std::vector<int>{12});
  CHECK(log2_ticks(0, 8).empty());
}

// Issue 14: a job's communicators each get their own rules, so the report reads per communicator shape.
TEST_CASE("a section per communicator shape, each with the rules that decide its calls") {
  ReportData d = sample();
  for (JournalRecord r : std::vector<JournalRecord>(d.records)) {
    r.scale = Scale{2, 2};  // one rank per node on two nodes
    d.records.push_back(r);
  }
  profiles::Profile p;
  profiles::Rule r;
  r.collective = nccl::Collective::allreduce;
  r.min_bytes = 4096;
  r.max_bytes = 65536;
  r.algorithm = nccl::Algorithm::tree;
  r.protocol = nccl::Protocol::ll;
  r.nodes = profiles::CountRange{2, 2};
  r.ranks_per_node = profiles::CountRange{1, 1};
  p.rules.push_back(r);
  d.profile = p;
  const std::string html = render_report_html(d);
  CHECK(count(html, "<section class=\"shape\"") == 2);
  const size_t one_node = html.find("id=\"shape-1x8\""), two_nodes = html.find("id=\"shape-2x2\"");
  REQUIRE(one_node != std::string::npos);
  REQUIRE(two_nodes != std::string::npos);
  const std::string first = html.substr(one_node, two_nodes - one_node), second = html.substr(two_nodes);
  CHECK(first.find("No rule for this communicator: NCCL decides every call.") != std::string::npos);
  CHECK(second.find("<li>allreduce 4 KiB - 64 KiB: tree/ll</li>") != std::string::npos);
  CHECK(count(first, "<svg ") == 2);
  CHECK(count(second.substr(0, second.find("</section>")), "<svg ") == 2);
}

TEST_CASE("sections name the group kinds a shape serves, the layout is tabled with what no rule steers") {
  ReportData d = sample();
  for (JournalRecord r : std::vector<JournalRecord>(d.records)) {
    r.scale = Scale{2, 2};
    d.records.push_back(r);
  }
  using nccl::Operation;
  JournalHeader h = *d.header;
  h.layout = profiles::JobLayout{"tp=8,pp=2,dp=2",
                                 {{"tp", 1, 8, 4, {Operation::allreduce, Operation::allgather}},
                                  {"dp", 2, 2, 16, {Operation::allreduce}},
                                  {"pp", 2, 2, 16, {Operation::sendrecv}},
                                  {"ep", 2, 8, 8, {Operation::alltoall}}}};
  d.header = h;
  const std::string html = render_report_html(d);
  CHECK(html.find("<h2>Communicator 1x8 (8 ranks): tensor parallel, 4 groups</h2>") != std::string::npos);
  CHECK(html.find("(2 ranks): data parallel, 16 groups; pipeline parallel, 16 groups</h2>") !=
        std::string::npos);
  const std::string second = html.substr(html.find("id=\"shape-2x2\""));
  CHECK(second.find("pipeline parallel sendrecv: no per-call rule exists") < second.find("</section>"));
  // The layout's table: every kind, the expert groups too although no measurement has their shape.
  const std::string table = html.substr(html.find("<h2>Job layout tp=8,pp=2,dp=2</h2>"));
  CHECK(count(table.substr(0, table.find("</table>")), "<tr><td>") == 4);
  CHECK(table.find("<td>allreduce: measured; allgather: not measured</td>") != std::string::npos);
  CHECK(table.find("<td>alltoall: no per-call rule exists") != std::string::npos);
  // Without a layout the sections name the shape alone, as before.
  d.header->layout.reset();
  CHECK(render_report_html(d).find("Job layout") == std::string::npos);
}

TEST_CASE("production records get their own section and stay out of the calibration's charts") {
  ReportData d = sample();
  const std::string before = render_report_html(d);
  CHECK(before.find("What production taught") == std::string::npos);
  for (double us : {30.0, 24.0}) {
    JournalRecord r = record(Candidate{nccl::Algorithm::tree, nccl::Protocol::ll, 0}, 4096, us);
    if (us == 24.0) r.measurement.request.candidate = Candidate{nccl::Algorithm::ring, nccl::Protocol::ll, 0};
    r.source = "production";
    r.runner = "telemetry (500 calls, 2 rank files)";
    d.records.push_back(r);
  }
  const std::string html = render_report_html(d);
  CHECK(html.find("<h2>What production taught</h2>") != std::string::npos);
  CHECK(html.find("ring/ll (fastest)") != std::string::npos);
  CHECK(html.find("telemetry (500 calls, 2 rank files)") != std::string::npos);
  // The charts and the derived rules are the calibration's alone: no new series, the same rule bands.
  CHECK(count(html, "<path class=\"series") == count(before, "<path class=\"series"));
  CHECK(count(html, "class=\"rule-band\"") == count(before, "class=\"rule-band\""));
}

TEST_CASE("point-to-point operations get a chart per shape, one line per process-wide setting") {
  ReportData d = sample();
  using nccl::Operation;
  // The expert groups' all-to-all on 2 nodes x 2 (anchor shape-2x4: nodes x ranks), under NCCL's defaults and
  // under one point-to-point setting twice as fast; a copy counted for a setting that cannot reach the shape
  // adds no line.
  auto a2a = [](const std::string& setting, uint64_t bytes, double us) {
    JournalRecord r = record(Candidate{}, bytes, us);
    r.setting =
        ProcessSetting{setting, setting == "default" ? std::map<std::string, std::string>{}
                                                     : std::map<std::string, std::string>{{"X", "1"}}};
    r.scale = Scale{2, 4};
    r.measurement.request.set_operation(Operation::alltoall);
    return r;
  };
  for (uint64_t b = 1024; b <= 65536; b *= 4) {
    d.records.push_back(a2a("default", b, 40));
    d.records.push_back(a2a("p2p:NCCL_PXN_DISABLE=1", b, 20));
    JournalRecord copy = a2a("cross_nic=1", b, 40);
    copy.measured_under = "default";
    d.records.push_back(copy);
  }
  const std::string html = render_report_html(d);
  const size_t at = html.find("id=\"shape-2x4\"");
  REQUIRE(at != std::string::npos);
  const std::string section = html.substr(at, html.find("</section>", at) - at);
  CHECK(section.find("<h3>alltoall, 2x2 (4 ranks)</h3>") != std::string::npos);
  CHECK(section.find("no per-call rule exists") != std::string::npos);
  CHECK(count(section, "data-series=\"default\"") == 1);
  CHECK(count(section, "data-series=\"p2p:NCCL_PXN_DISABLE=1\"") == 1);
  CHECK(count(section, "data-series=\"cross_nic=1\"") == 0);
  // The collectives' charts never draw point-to-point records.
  const std::string first = html.substr(html.find("id=\"shape-1x8\""));
  CHECK(first.substr(0, first.find("</section>")).find("alltoall") == std::string::npos);
}

TEST_CASE("a shape measured as several groups at once charts each group against the median group") {
  ReportData d = sample();
  d.header->nodes = 4;
  // 1x8 over 4 nodes: four groups at once, group 2 a quarter slower at every size from 1 MiB.
  for (auto& r : d.records)
    if (r.measurement.outcome == Outcome::ok) {
      const double t = r.measurement.times_us[2];
      r.measurement.group_times_us = {t, t, r.measurement.request.bytes >= (1u << 20) ? t / 0.75 : t, t};
    }
  const std::string html = render_report_html(d);
  const size_t chart = html.find("each group&#39;s bus bandwidth against the median group&#39;s");
  REQUIRE(chart != std::string::npos);
  CHECK(html.find("Measured as 4 groups at once") != std::string::npos);
  CHECK(html.find("The slowest: 1x8 group 2 (node 2): 0.75 of the median group") != std::string::npos);
  // Without per-group times (one communicator) there is no such chart.
  CHECK(render_report_html(sample()).find("groups at once") == std::string::npos);
}
