#pragma once
// The value of NCCL_IB_HCA: comma-separated device names, each with an optional `:port`. By default each name
// is a prefix ("mlx5" matches mlx5_0, mlx5_1, ...); a leading `=` asks for exact names, a leading `^`
// excludes the listed devices instead of selecting them, `^=` does both. Example: "=mlx5_0:1,mlx5_3:1".

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace autotune::nccl {

struct IbHcaDevice {
  std::string name;         // letters, digits, '_', '-', '.'
  std::optional<int> port;  // 1..255; nullopt: every port
  bool operator==(const IbHcaDevice&) const = default;
};

struct IbHcaSpec {
  bool exclude = false;  // `^`
  bool exact = false;    // `=`
  std::vector<IbHcaDevice> devices;
  bool operator==(const IbHcaSpec&) const = default;

  // Whether NCCL would use port `port` of device `device` under this value.
  bool selects(std::string_view device, int port) const;
};

// Throws InputError (no file, line 0) saying what was expected and what was found.
IbHcaSpec parse_ib_hca_spec(std::string_view text);
// parse(format(x)) == x.
std::string format_ib_hca_spec(const IbHcaSpec& spec);

}  // namespace autotune::nccl
