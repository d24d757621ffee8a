// The Prometheus text format as written (metrics/exposition.hpp): HELP and TYPE before each family's
// samples, label values escaped so that a name from a file cannot break a line, names outside the grammar
// and duplicate series refused; and the timestamp parser the profile's age is taken with.
#include <catch2/catch.hpp>

#include "common/utc_time.hpp"
#include "metrics/exposition.hpp"

using namespace autotune;
using namespace autotune::metrics;

TEST_CASE("a family is its HELP and TYPE lines, then one line per sample", "[metrics]") {
  const std::string text =
      format_exposition({{"x_bytes",
                          "Bytes of x",
                          "gauge",
                          {{{{"a", "1"}, {"b", "two"}}, 1048576.0}, {{{"a", "2"}, {"b", "two"}}, 0.5}}},
                         {"empty_total", "No samples", "counter", {}}});
  CHECK(text ==
        "# HELP x_bytes Bytes of x\n# TYPE x_bytes gauge\n"
        "x_bytes{a=\"1\",b=\"two\"} 1048576\nx_bytes{a=\"2\",b=\"two\"} 0.5\n");
}

TEST_CASE("label values from files are escaped", "[metrics]") {
  CHECK(escape_label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
  const std::string text = format_exposition({{"m", "h", "gauge", {{{{"cluster", "x\"} 1\nfake 2"}}, 3.0}}}});
  CHECK(text == "# HELP m h\n# TYPE m gauge\nm{cluster=\"x\\\"} 1\\nfake 2\"} 3\n");
}

TEST_CASE("names outside the grammar and duplicate series are programming errors", "[metrics]") {
  CHECK_THROWS_AS(format_exposition({{"1bad", "h", "gauge", {{{}, 1.0}}}}), std::logic_error);
  CHECK_THROWS_AS(format_exposition({{"m", "h", "gauge", {{{{"__name", "x"}}, 1.0}}}}), std::logic_error);
  CHECK_THROWS_AS(format_exposition({{"m", "h", "summary", {{{}, 1.0}}}}), std::logic_error);
  CHECK_THROWS_AS(format_exposition({{"m", "h", "gauge", {{{{"a", "1"}}, 1.0}, {{{"a", "1"}}, 2.0}}}}),
                  std::logic_error);
}

TEST_CASE("RFC 3339 timestamps read back to the time they name", "[metrics]") {
  CHECK(parse_utc_timestamp("1970-01-01T00:00:00Z") == std::time_t{0});
  CHECK(parse_utc_timestamp(utc_timestamp(1764000000)) == std::time_t{1764000000});
  CHECK(parse_utc_timestamp("2026-12-01T01:00:00+01:00") == parse_utc_timestamp("2026-12-01T00:00:00Z"));
  CHECK(parse_utc_timestamp("2026-12-01T00:00:00.250Z") == parse_utc_timestamp("2026-12-01T00:00:00Z"));
  CHECK_FALSE(parse_utc_timestamp("2026-12-01 00:00:00"));
  CHECK_FALSE(parse_utc_timestamp("2026-13-01T00:00:00Z"));
  CHECK_FALSE(parse_utc_timestamp("2026-12-01T00:00:00Zjunk"));
  CHECK_FALSE(parse_utc_timestamp(""));
}
