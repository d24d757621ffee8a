#include "topology/pci_acs.hpp"

namespace autotune::topology {
namespace {

constexpr size_t kExtendedStart = 0x100, kConfigSize = 0x1000;
constexpr uint32_t kAcsCapabilityId = 0x000d;

uint32_t dword_at(std::string_view config, size_t offset) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(config[offset + i])) << (8 * i);
  return v;
}

}  // namespace

AcsReading read_acs_control(std::string_view config) {
  if (config.size() <= kExtendedStart)
    return {std::nullopt, "config space beyond 256 bytes not readable (reading it needs root)"};
  size_t offset = kExtendedStart;
  // Each capability points at the next; a list can be at most (4096 - 256) / 4 entries long, so a loop in
  // a corrupt list stops there.
  for (int hops = 0; hops < 960 && offset >= kExtendedStart && offset + 8 <= config.size(); ++hops) {
    const uint32_t header = dword_at(config, offset);
    if (header == 0 || header == 0xffffffff) break;
    if ((header & 0xffff) == kAcsCapabilityId) {
      const uint32_t caps = dword_at(config, offset + 4);
      return {static_cast<uint16_t>(caps >> 16), ""};  // the control register is the upper half
    }
    const size_t next = (header >> 20) & 0xffc;
    if (next == 0 || next >= kConfigSize) break;
    offset = next;
  }
  return {std::nullopt, "no ACS capability"};
}

std::string acs_control_names(uint16_t control) {
  static const char* const kNames[] = {"SrcValid",    "TransBlk",   "ReqRedir",   "CmpltRedir",
                                       "UpstreamFwd", "EgressCtrl", "DirectTrans"};
  std::string out;
  for (int bit = 0; bit < 7; ++bit)
    if (control & (1u << bit)) out += std::string(out.empty() ? "" : " ") + kNames[bit] + "+";
  return out.empty() ? "none" : out;
}

}  // namespace autotune::topology
