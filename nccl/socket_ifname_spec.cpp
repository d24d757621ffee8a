#include "nccl/socket_ifname_spec.hpp"

#include "common/input_error.hpp"
#include "nccl/name_list.hpp"

namespace autotune::nccl {
namespace {

constexpr NameListWords kWords{"NCCL_SOCKET_IFNAME", "interface", "=eth0, ib or ^docker,lo"};
constexpr size_t kMaxNames = 16;       // NCCL's MAX_IFS
constexpr size_t kMaxNameLength = 15;  // IFNAMSIZ - 1

[[noreturn]] void fail(const std::string& expected, std::string_view found) {
  throw InputError("", 0,
                   "NCCL_SOCKET_IFNAME: expected " + expected + "; found \"" + std::string(found) + "\"");
}

}  // namespace

bool SocketIfnameSpec::selects(std::string_view name) const {
  bool listed = false;
  for (const auto& n : names) listed = listed || name_matches(name, n, exact);
  return exclude ? !listed : listed;
}

SocketIfnameSpec parse_socket_ifname_spec(std::string_view text) {
  if (text.size() < 2)
    fail("at least two characters (NCCL ignores a shorter value and picks an interface itself)", text);
  const NameList list = split_name_list(text, kWords);
  if (list.entries.size() > kMaxNames) fail("at most 16 interface names (NCCL drops the rest)", text);
  SocketIfnameSpec spec;
  spec.exclude = list.exclude;
  spec.exact = list.exact;
  for (const auto& e : list.entries) {
    if (e.port)
      fail("interface names without ':port' (NCCL ignores ports for sockets)", e.name + ":" + *e.port);
    if (e.name.size() > kMaxNameLength)
      fail("interface names of at most 15 characters (Linux's limit)", e.name);
    spec.names.push_back(e.name);
  }
  return spec;
}

std::string format_socket_ifname_spec(const SocketIfnameSpec& spec) {
  std::string out;
  if (spec.exclude) out += '^';
  if (spec.exact) out += '=';
  for (size_t i = 0; i < spec.names.size(); ++i) out += (i ? "," : "") + spec.names[i];
  return out;
}

}  // namespace autotune::nccl
