#pragma once
// Aligned text tables for terminals (tune's summary, profile show, import): columns padded to their widest
// cell, numbers right-aligned, a rule under the header. Plus the few number formats every table shares, so
// that terminal and HTML report print the same figures. Value type; pure functions.

#include <cstdint>
#include <string>
#include <vector>

#include "profiles/profile.hpp"

namespace autotune::report {

enum class Align { left, right };

class TextTable {
 public:
  TextTable(std::vector<std::string> headers, std::vector<Align> aligns = {});
  void add_row(
      std::vector<std::string> cells);  // missing cells print empty; extra cells are an error (throws)
  size_t rows() const { return rows_.size(); }
  // Two spaces between columns, no trailing spaces, one line per row, each ending in '\n'.
  std::string render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

// "8 B", "64 KiB", "1.5 MiB", "8 GiB": message sizes for people.
std::string human_size(uint64_t bytes);
// "8 B - 64 KiB".
std::string human_size_range(uint64_t min_bytes, uint64_t max_bytes);
// "123.4" (GB/s figures), "+12.3%" (gains as time ratio - 1), "1.23x".
std::string format_gbps(double gbps);
std::string format_gain(double gain);
std::string format_ratio(double ratio);
// A rule's gain (profiles::gain_of) as every table shows it: "+5.8%", "-" when unknown.
std::string format_rule_gain(const profiles::Rule& rule);
// Its interval and confidence, "+4.1%..+7.5% (90%)", "" when the rule carries none.
std::string format_gain_interval(const profiles::Rule& rule);

}  // namespace autotune::report
