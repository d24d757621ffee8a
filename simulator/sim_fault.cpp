#include "simulator/sim_fault.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "common/input_error.hpp"

namespace autotune::sim {
namespace {

constexpr const char* kForms =
    "node=N,nic=K,rate=F (a NIC at a fraction of its rate), node=N,gpu=K,clock=F (a throttled GPU), "
    "node=N,gpu=K,nvlink=F (NVLinks at a fraction of their bandwidth) or spine=F,beyond=N (the network "
    "between leaf switches, crossed by communicators over more than N nodes), F in (0, 1]";

[[noreturn]] void fail(const std::string& expected, std::string_view found) {
  throw InputError("--sim-fault", 0, "expected " + expected + "; found \"" + std::string(found) + "\"");
}

int index_value(std::string_view key, std::string_view value) {
  int v = -1;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v < 0 || v > 65535)
    fail(std::string(key) + "= an index 0..65535", value);
  return v;
}

double fraction_value(std::string_view key, std::string_view value) {
  const std::string text(value);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v) || v <= 0.0 || v > 1.0)
    fail(std::string(key) + "= a fraction in (0, 1] of the healthy value", value);
  return v;
}

}  // namespace

SimFault parse_sim_fault(std::string_view text) {
  std::map<std::string, std::string> fields;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string_view item =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) fail(kForms, text);
    const std::string key(item.substr(0, eq));
    if (key != "node" && key != "nic" && key != "gpu" && key != "rate" && key != "clock" && key != "nvlink" &&
        key != "spine" && key != "beyond")
      fail(std::string("keys node, nic, gpu, rate, clock, nvlink, spine, beyond (") + kForms + ")", item);
    if (!fields.emplace(key, std::string(item.substr(eq + 1))).second) fail("each key once", text);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  SimFault f;
  if (fields.count("spine") && fields.count("beyond") && fields.size() == 2) {
    f.kind = SimFault::Kind::spine;
    f.fraction = fraction_value("spine", fields["spine"]);
    f.beyond = index_value("beyond", fields["beyond"]);
    return f;
  }
  if (!fields.count("node")) fail(kForms, text);
  f.node = index_value("node", fields["node"]);
  const bool nic = fields.count("nic") && fields.count("rate") && fields.size() == 3;
  const bool clock = fields.count("gpu") && fields.count("clock") && fields.size() == 3;
  const bool nvlink = fields.count("gpu") && fields.count("nvlink") && fields.size() == 3;
  if (nic) {
    f.kind = SimFault::Kind::nic_rate;
    f.device = index_value("nic", fields["nic"]);
    f.fraction = fraction_value("rate", fields["rate"]);
  } else if (clock || nvlink) {
    f.kind = clock ? SimFault::Kind::gpu_clock : SimFault::Kind::nvlink;
    f.device = index_value("gpu", fields["gpu"]);
    f.fraction = fraction_value(clock ? "clock" : "nvlink", fields[clock ? "clock" : "nvlink"]);
  } else {
    fail(kForms, text);
  }
  return f;
}

std::string describe_fault(const SimFault& f) {
  char pct[16];
  std::snprintf(pct, sizeof pct, "%g%%", f.fraction * 100.0);
  if (f.kind == SimFault::Kind::spine)
    return std::string("spine at ") + pct + " of its rate for communicators over more than " +
           std::to_string(f.beyond) + " nodes";
  const std::string where = "node " + std::to_string(f.node) + ": ";
  switch (f.kind) {
    case SimFault::Kind::spine:
      break;
    case SimFault::Kind::nic_rate:
      return where + (f.nic.empty() ? "NIC " + std::to_string(f.device) : f.nic) + " at " + pct +
             " of its rate";
    case SimFault::Kind::gpu_clock:
      return where + "GPU" + std::to_string(f.device) + " clock at " + pct;
    case SimFault::Kind::nvlink:
      return where + "GPU" + std::to_string(f.device) + " NVLinks at " + pct + " of their bandwidth";
  }
  return where;
}

}  // namespace autotune::sim
