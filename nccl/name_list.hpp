#pragma once
// NCCL's list of names, as NCCL_IB_HCA and NCCL_SOCKET_IFNAME take it (parseStringList and matchIfList in
// NCCL's src/misc/utils.cc): an optional leading `^` (use everything but the names listed), then an
// optional `=` (exact names; otherwise each name is a prefix), then names separated by ',', each with an
// optional `:port`. This is the splitting both share; each variable checks its own ports and limits
// (nccl/ib_hca_spec.hpp, nccl/socket_ifname_spec.hpp). Pure functions: thread-safe.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace autotune::nccl {

struct NameListEntry {
  std::string name;
  std::optional<std::string> port;  // the text after ':', unchecked
};

struct NameList {
  bool exclude = false;  // `^`
  bool exact = false;    // `=`
  std::vector<NameListEntry> entries;
};

// What the variable calls its names in messages: {"NCCL_IB_HCA", "device", "mlx5_0 or mlx5_0:1"}.
struct NameListWords {
  std::string_view variable;
  std::string_view noun;
  std::string_view example;
};

// Throws InputError (no file, line 0) naming the variable: no names, an empty name, a character that is
// not a letter, digit, '_', '-' or '.'.
NameList split_name_list(std::string_view text, const NameListWords& words);

// NCCL's matchIf: `listed` is a prefix of `name`, or equal to it when `exact`.
bool name_matches(std::string_view name, std::string_view listed, bool exact);

}  // namespace autotune::nccl
