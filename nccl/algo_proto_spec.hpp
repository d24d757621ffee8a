#pragma once
// The values of NCCL_ALGO and NCCL_PROTO: `;`-separated entries, each an optional `func:` prefix (only the
// first entry may omit it; it then covers every collective), a leading `^` to exclude instead of select, and
// a comma list of names. Names are case-insensitive. Example: "ring,tree;allreduce:nvls,ring", "^LL128".
// Parsing is strict because NCCL fails communicator init on a value it cannot read.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nccl/vocabulary.hpp"

namespace autotune::nccl {

template <typename Name>
struct SelectionEntry {
  std::optional<Collective> collective;  // nullopt: every collective (first entry only)
  bool exclude = false;                  // `^`: the names are removed rather than selected
  std::vector<Name> names;
  bool operator==(const SelectionEntry&) const = default;
};

template <typename Name>
struct SelectionSpec {
  std::vector<SelectionEntry<Name>> entries;
  bool operator==(const SelectionSpec&) const = default;
};

using AlgoSpec = SelectionSpec<Algorithm>;
using ProtoSpec = SelectionSpec<Protocol>;

// Throw InputError (no file, line 0) saying what was expected and what was found.
AlgoSpec parse_algo_spec(std::string_view text);
ProtoSpec parse_proto_spec(std::string_view text);

// Whether NCCL, under this value, may use `name` for collective `c`: the entry for `c` decides, else a first
// entry that names no collective; with neither, every name is allowed.
bool selects(const AlgoSpec& spec, Collective c, Algorithm name);
bool selects(const ProtoSpec& spec, Collective c, Protocol name);
// Whether the entry that decides for `c` lists `name` itself (not by exclusion): how a user turns on a
// protocol NCCL leaves off by default on a platform (LL128 where NCCL does not consider it safe).
bool selects_explicitly(const ProtoSpec& spec, Collective c, Protocol name);

// NCCL's own spellings: "Ring,Tree;AllReduce:NVLS,Ring", "^LL128". parse(format(x)) == x.
std::string format_algo_spec(const AlgoSpec& spec);
std::string format_proto_spec(const ProtoSpec& spec);

}  // namespace autotune::nccl
