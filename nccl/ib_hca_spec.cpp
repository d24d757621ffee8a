#include "nccl/ib_hca_spec.hpp"

#include <cctype>

#include "common/input_error.hpp"

namespace autotune::nccl {
namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

[[noreturn]] void fail(const std::string& expected, std::string_view found) {
  throw InputError("", 0, "NCCL_IB_HCA: expected " + expected + "; found \"" + std::string(found) + "\"");
}

}  // namespace

bool IbHcaSpec::selects(std::string_view device, int port) const {
  bool listed = false;
  for (const auto& d : devices) {
    bool name_ok = exact ? device == d.name : device.substr(0, d.name.size()) == d.name;
    if (name_ok && (!d.port || *d.port == port)) listed = true;
  }
  return exclude ? !listed : listed;
}

IbHcaSpec parse_ib_hca_spec(std::string_view text) {
  IbHcaSpec spec;
  std::string_view rest = text;
  if (!rest.empty() && rest.front() == '^') spec.exclude = true, rest.remove_prefix(1);
  if (!rest.empty() && rest.front() == '=') spec.exact = true, rest.remove_prefix(1);
  if (rest.empty()) fail("device names such as mlx5_0 or mlx5_0:1", text);
  while (true) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    size_t colon = item.find(':');
    std::string_view dev = item.substr(0, colon);
    if (dev.empty()) fail("a device name before each ',' or ':'", item);
    for (char c : dev)
      if (!is_name_char(c)) fail("a device name (letters, digits, '_', '-', '.')", dev);
    IbHcaDevice d{std::string(dev), std::nullopt};
    if (colon != std::string_view::npos) {
      std::string_view port = item.substr(colon + 1);
      int value = 0;
      bool ok = !port.empty() && port.size() <= 3;
      for (char c : port) ok = ok && std::isdigit(static_cast<unsigned char>(c));
      if (ok) {
        for (char c : port) value = value * 10 + (c - '0');
        ok = value >= 1 && value <= 255;
      }
      if (!ok) fail("a port number 1..255 after ':'", port);
      d.port = value;
    }
    spec.devices.push_back(std::move(d));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return spec;
}

std::string format_ib_hca_spec(const IbHcaSpec& spec) {
  std::string out;
  if (spec.exclude) out += '^';
  if (spec.exact) out += '=';
  for (size_t i = 0; i < spec.devices.size(); ++i) {
    if (i > 0) out += ',';
    out += spec.devices[i].name;
    if (spec.devices[i].port) out += ":" + std::to_string(*spec.devices[i].port);
  }
  return out;
}

}  // namespace autotune::nccl
