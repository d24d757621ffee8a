#include "report/table_format.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <stdexcept>

#include "common/byte_size.hpp"

namespace autotune::report {

TextTable::TextTable(std::vector<std::string> headers, std::vector<Align> aligns)
    : headers_(std::move(headers)), aligns_(std::move(aligns)) {
  aligns_.resize(headers_.size(), Align::left);
}

void TextTable::add_row(std::vector<std::string> cells) {
  if (cells.size() > headers_.size())
    throw std::logic_error("TextTable: a row has " + std::to_string(cells.size()) + " cells for " +
                           std::to_string(headers_.size()) + " columns");
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

namespace {
// Display width: UTF-8 continuation bytes take no column.
size_t width(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}
}  // namespace

std::string TextTable::render() const {
  std::vector<size_t> w(headers_.size());
  for (size_t i = 0; i < headers_.size(); ++i) w[i] = width(headers_[i]);
  for (const auto& r : rows_)
    for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], width(r[i]));
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < cells.size(); ++i) {
      std::string pad(w[i] - width(cells[i]), ' ');
      if (i) out += "  ";
      out += aligns_[i] == Align::right ? pad + cells[i] : cells[i] + (i + 1 < cells.size() ? pad : "");
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(headers_);
  std::vector<std::string> rule;
  for (size_t i = 0; i < headers_.size(); ++i) rule.emplace_back(w[i], '-');
  out += line(rule);
  for (const auto& r : rows_) out += line(r);
  return out;
}

std::string human_size(uint64_t bytes) {
  return human_byte_size(bytes);
}

std::string human_size_range(uint64_t min_bytes, uint64_t max_bytes) {
  if (max_bytes == UINT64_MAX) return human_size(min_bytes) + " and up";
  return human_size(min_bytes) + " - " + human_size(max_bytes);
}

std::string format_gbps(double gbps) {
  return fmt::format("{:.1f}", gbps);
}
std::string format_gain(double gain) {
  return fmt::format("{:+.1f}%", gain * 100);
}
std::string format_ratio(double ratio) {
  return fmt::format("{:.2f}x", ratio);
}

std::string format_rule_gain(const profiles::Rule& rule) {
  auto g = profiles::gain_of(rule);
  return g ? format_gain(*g) : "-";
}

std::string format_gain_interval(const profiles::Rule& rule) {
  if (!rule.gain) return "";
  return format_gain(rule.gain->low) + ".." + format_gain(rule.gain->high) +
         fmt::format(" ({:.0f}%)", rule.gain->confidence * 100);
}

}  // namespace autotune::report
