// The HTML report's structure: one series path per candidate per chart, labelled axes, rule bands, failed
// candidates, the source banner, escaping; and the terminal table format.
#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>
#include <string>

#include "common/atomic_file.hpp"
#include "report/report_html.hpp"
#include "report/svg_chart.hpp"
#include "report/table_format.hpp"

using namespace autotune;
using namespace autotune::tuner;
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
  CHECK(html.find("bus bandwidth (GB/s)") != std::string::npos);
  CHECK(html.find("message size (bytes, log scale)") != std::string::npos);
  CHECK(html.find(">1 KiB<") != std::string::npos);  // tick labels in human units
  // Self-contained: no scripts, nothing fetched.
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));
  CHECK(html.find("https://") == std::string::npos);
}

TEST_CASE("the derived rule is shaded and tabled; failures and the source are shown") {
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

TEST_CASE("a profile's rules replace derived ones; a profile alone renders its rule table") {
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
  JournalContents j{d.header, d.records, {}};
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
