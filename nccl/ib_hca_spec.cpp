#include "nccl/ib_hca_spec.hpp"

#include <cctype>

#include "common/input_error.hpp"
#include "nccl/name_list.hpp"

namespace autotune::nccl {
namespace {

constexpr NameListWords kWords{"NCCL_IB_HCA", "device", "mlx5_0 or mlx5_0:1"};

}  // namespace

bool IbHcaSpec::selects(std::string_view device, int port) const {
  bool listed = false;
  for (const auto& d : devices)
    if (name_matches(device, d.name, exact) && (!d.port || *d.port == port)) listed = true;
  return exclude ? !listed : listed;
}

IbHcaSpec parse_ib_hca_spec(std::string_view text) {
  const NameList list = split_name_list(text, kWords);
  IbHcaSpec spec;
  spec.exclude = list.exclude;
  spec.exact = list.exact;
  for (const auto& e : list.entries) {
    IbHcaDevice d{e.name, std::nullopt};
    if (e.port) {
      const std::string& port = *e.port;
      int value = 0;
      bool ok = !port.empty() && port.size() <= 3;
      for (char c : port) ok = ok && std::isdigit(static_cast<unsigned char>(c));
      if (ok) {
        for (char c : port) value = value * 10 + (c - '0');
        ok = value >= 1 && value <= 255;
      }
      if (!ok)
        throw InputError("", 0,
                         "NCCL_IB_HCA: expected a port number 1..255 after ':'; found \"" + port + "\"");
      d.port = value;
    }
    spec.devices.push_back(std::move(d));
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
