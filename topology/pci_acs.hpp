#pragma once
// PCIe Access Control Services (ACS) from a device's configuration space, as sysfs `config` gives it: the
// extended capability list from offset 0x100, capability id 0x000d, its control register at +6. With ACS
// redirection on a switch port, peer-to-peer traffic between a GPU and a NIC (GPUDirect RDMA) or two GPUs
// is sent up to the root complex instead of across the switch. Pure functions: thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace autotune::topology {

struct AcsReading {
  std::optional<uint16_t> control;  // the ACS control register
  std::string why;                  // when absent: no capability, or config space too short to tell
};

// `config` is the raw bytes of the device's configuration space. Unprivileged reads of sysfs `config`
// return only the first 64 bytes, which says nothing about extended capabilities.
AcsReading read_acs_control(std::string_view config);

// The control bits that send peer-to-peer traffic upstream: P2P Request Redirect, P2P Completion
// Redirect, P2P Egress Control (what Linux's `disable_acs_redir=` clears).
inline constexpr uint16_t kAcsRedirectBits = 0x0004 | 0x0008 | 0x0020;

// The bits set, by lspci's names for ACSCtl: "ReqRedir+ CmpltRedir+ ...".
std::string acs_control_names(uint16_t control);

}  // namespace autotune::topology
