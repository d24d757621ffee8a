#include "cli/options.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "common/input_error.hpp"
#include "common/text.hpp"

namespace autotune::cli {

std::optional<po::variables_map> parse_command_line(CommandSpec& spec, const Args& args) {
  spec.options.add_options()("help,h", "show this help");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(spec.options).positional(spec.positional).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: " << spec.usage << "\n\n";
      if (!spec.description.empty()) std::cout << spec.description << "\n\n";
      std::cout << spec.options << "\n";
      return std::nullopt;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError("<arguments>", 0, std::string(e.what()) + " (usage: " + spec.usage + ")");
  }
  return vm;
}

std::vector<nccl::Collective> parse_collective_list(const std::string& text, const std::string& option) {
  std::vector<nccl::Collective> out;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto c = nccl::parse_collective(item);
    if (!c)
      throw InputError(
          "<arguments>", 0,
          option + ": expected names from broadcast, reduce, allgather, reducescatter, allreduce; found '" +
              item + "'");
    out.push_back(*c);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::vector<nccl::Operation> parse_operation_list(const std::string& text, const std::string& option) {
  std::vector<nccl::Operation> out;
  for (std::string_view item : split(text, ',')) {
    auto op = nccl::parse_operation(item);
    if (!op)
      throw InputError(
          "<arguments>", 0,
          option +
              ": expected names from broadcast, reduce, allgather, reducescatter, allreduce, alltoall, "
              "sendrecv, gather, scatter; found '" +
              std::string(item) + "'");
    out.push_back(*op);
  }
  return out;
}

double parse_gain(const std::string& text, const std::string& option) {
  try {
    size_t used = 0;
    double v = std::stod(text, &used);
    if (used == text.size() - 1 && text.back() == '%')
      v /= 100.0;
    else if (used != text.size())
      throw std::invalid_argument(text);
    if (v >= 0 && v < 10) return v;
  } catch (const std::exception&) {
  }
  throw InputError("<arguments>", 0,
                   option + ": expected a fraction (0.03) or a percentage (3%), found '" + text + "'");
}

uint64_t parse_seed(const std::string& text, const std::string& option) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw InputError(
        "<arguments>", 0,
        option + ": expected a whole number from 0 to 18446744073709551615, found '" + text + "'");
  return v;
}

double require_watchdog_scale(double scale) {
  if (!(scale > 0.0) || !std::isfinite(scale))
    throw InputError(
        "<arguments>", 0,
        "--watchdog-scale: expected a number greater than 0, found " + (std::ostringstream() << scale).str());
  return scale;
}

double parse_duration(const std::string& text, const std::string& option) {
  double total = 0;
  size_t i = 0;
  bool any = false;
  while (i < text.size()) {
    size_t j = i;
    while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.')) ++j;
    if (j == i) break;
    // strtod, not stod: "." or a run of digits too long for a double is a bad duration, not an exception.
    const std::string number = text.substr(i, j - i);
    char* end = nullptr;
    const double v = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || !std::isfinite(v)) break;
    const char unit = j < text.size() ? text[j] : '?';  // a bare "1" could be meant as minutes
    double scale = unit == 'h' ? 3600 : unit == 'm' ? 60 : unit == 's' ? 1 : -1;
    if (scale < 0) break;
    total += v * scale;
    i = j < text.size() ? j + 1 : j;
    any = true;
  }
  if (!any || i != text.size() || total <= 0)
    throw InputError(
        "<arguments>", 0,
        option + ": expected a duration with units, like 20m, 90s or 1h30m, found '" + text + "'");
  return total;
}

}  // namespace autotune::cli
