#include "tests/standin/nccl/settings.hpp"

#include <nccl.h>

#include <cmath>
#include <cstdlib>

#include "common/input_error.hpp"
#include "nccl/version.hpp"
#include "tests/standin/common/node_topology.hpp"

namespace autotune::standin {

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

[[noreturn]] void bad(const char* name, const std::string& expected, const std::string& found) {
  throw InputError(std::string("<env ") + name + ">", 0, "expected " + expected + ", found '" + found + "'");
}

double number(const char* name, const std::string& text, double lo, double hi) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(v) || v < lo || v > hi)
    bad(name, "a number from " + std::to_string(lo) + " to " + std::to_string(hi), text);
  return v;
}

int integer(const char* name, const std::string& text, long lo, long hi) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || v < lo || v > hi)
    bad(name, "an integer from " + std::to_string(lo) + " to " + std::to_string(hi), text);
  return static_cast<int>(v);
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

int version(const std::string& text) {
  if (auto v = nccl::Version::parse(text)) return v->code();
  // Or a code as NCCL_VERSION_CODE spells it (NCCL >= 2.9; tuner plugins need 2.21).
  char* end = nullptr;
  const long code = std::strtol(text.c_str(), &end, 10);
  auto v = *end == '\0' && code >= 20900 && code <= 99999 ? nccl::Version::from_code(static_cast<int>(code))
                                                          : std::nullopt;
  if (!v) bad("NCCL_STANDIN_VERSION", "a version such as 2.30.7 or 23007", text);
  return v->code();
}

std::vector<AlgoProto> choices(const char* name, const std::string& text) {
  std::vector<AlgoProto> out;
  for (const auto& item : split(text)) {
    size_t slash = item.find('/');
    auto a = nccl::parse_algorithm(item.substr(0, slash));
    auto p = slash == std::string::npos ? std::nullopt : nccl::parse_protocol(item.substr(slash + 1));
    if (!a || !p) bad(name, "algorithm/protocol pairs with NCCL's names, e.g. ring/ll128,tree/simple", item);
    out.emplace_back(*a, *p);
  }
  return out;
}

Faults read_faults() {
  Faults f;
  if (auto v = env("NCCL_STANDIN_FAULT_INIT_RANK"))
    for (const auto& r : split(*v))
      f.init_fail_ranks.push_back(integer("NCCL_STANDIN_FAULT_INIT_RANK", r, 0, 1 << 20));
  if (auto v = env("NCCL_STANDIN_FAULT_INIT_AFTER"))
    f.init_fail_after = integer("NCCL_STANDIN_FAULT_INIT_AFTER", *v, 0, 1 << 30);
  if (auto v = env("NCCL_STANDIN_FAULT_HANG")) f.hang = choices("NCCL_STANDIN_FAULT_HANG", *v);
  if (auto v = env("NCCL_STANDIN_FAULT_WRONG")) f.wrong = choices("NCCL_STANDIN_FAULT_WRONG", *v);
  if (auto v = env("NCCL_STANDIN_FAULT_ASYNC_AFTER"))
    f.async_after = static_cast<uint64_t>(integer("NCCL_STANDIN_FAULT_ASYNC_AFTER", *v, 1, 1 << 30));
  if (auto v = env("NCCL_STANDIN_FAULT_ASYNC_RANK"))
    f.async_rank = integer("NCCL_STANDIN_FAULT_ASYNC_RANK", *v, 0, 1 << 20);
  if (auto v = env("NCCL_STANDIN_FAULT_SLOW_RANK"))
    f.slow_rank = integer("NCCL_STANDIN_FAULT_SLOW_RANK", *v, 0, 1 << 20);
  if (auto v = env("NCCL_STANDIN_FAULT_SLOW_FACTOR"))
    f.slow_factor = number("NCCL_STANDIN_FAULT_SLOW_FACTOR", *v, 1.0, 1000.0);
  return f;
}

Settings read() {
  Settings s;
  s.version_code = NCCL_VERSION_CODE;
  try {
    if (auto v = env("NCCL_STANDIN_VERSION")) s.version_code = version(*v);
    if (auto v = env("NCCL_STANDIN_INIT_TIMEOUT"))
      s.init_timeout_s = number("NCCL_STANDIN_INIT_TIMEOUT", *v, 0.1, 86400.0);
    if (auto v = env("NCCL_STANDIN_STAGE_BYTES"))
      s.stage_bytes = static_cast<size_t>(integer("NCCL_STANDIN_STAGE_BYTES", *v, 4096, 1 << 30));
    if (auto v = env("NCCL_STANDIN_SEED"))
      s.seed = static_cast<uint64_t>(integer("NCCL_STANDIN_SEED", *v, 0, 2147483647));
    s.faults = read_faults();
  } catch (const InputError& e) {
    exit_bad_input(e);
  }
  return s;
}

}  // namespace

const Settings& settings() {
  static const Settings* s = new Settings(read());  // never destroyed: stream workers may outlive exit()
  return *s;
}

}  // namespace autotune::standin
