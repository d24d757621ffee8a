#pragma once
// The value of NCCL_SOCKET_IFNAME as NCCL reads it (src/misc/socket.cc, ncclFindInterfaces): the name list
// of nccl/name_list.hpp (`^` excludes, `=` asks for exact names, else prefixes), of network interface
// names. NCCL ignores a value of one character (it takes the variable only when it is longer), keeps at
// most 16 names (MAX_IFS) and ignores ports for sockets; those are refused here rather than silently
// dropped. Example: "=eth0", "ib", "^docker,lo". Pure functions: thread-safe.

#include <string>
#include <string_view>
#include <vector>

namespace autotune::nccl {

struct SocketIfnameSpec {
  bool exclude = false;
  bool exact = false;
  std::vector<std::string> names;  // 1..16 names, each 1..15 characters (Linux's IFNAMSIZ)
  bool operator==(const SocketIfnameSpec&) const = default;

  // Whether NCCL would use the interface `name` under this value.
  bool selects(std::string_view name) const;
};

// Throws InputError (no file, line 0) saying what was expected and what was found.
SocketIfnameSpec parse_socket_ifname_spec(std::string_view text);
// parse(format(x)) == x.
std::string format_socket_ifname_spec(const SocketIfnameSpec& spec);

}  // namespace autotune::nccl
