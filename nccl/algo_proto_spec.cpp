#include "nccl/algo_proto_spec.hpp"

#include <algorithm>

#include "common/input_error.hpp"
#include "common/text.hpp"

namespace autotune::nccl {
namespace {


std::string in_quotes(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

template <typename Name, typename ParseFn, typename AllNames>
SelectionSpec<Name> parse_spec(std::string_view text, const char* what, ParseFn parse, const AllNames& all) {
  if (text.empty())
    throw InputError("", 0, std::string(what) + ": expected a list of names; found an empty value");
  SelectionSpec<Name> spec;
  std::vector<std::string_view> entries = split(text, ';');
  for (size_t i = 0; i < entries.size(); ++i) {
    std::string_view entry = entries[i];
    SelectionEntry<Name> e;
    size_t colon = entry.find(':');
    if (colon != std::string_view::npos) {
      std::string_view func = entry.substr(0, colon);
      e.collective = parse_collective(func);
      if (!e.collective)
        throw InputError("", 0,
                         std::string(what) +
                             ": expected a collective before ':' (broadcast, reduce, allgather, " +
                             "reducescatter, allreduce); found " + in_quotes(func));
      for (const auto& prev : spec.entries)
        if (prev.collective == e.collective)
          throw InputError("", 0,
                           std::string(what) + ": expected each collective once; found " +
                               in_quotes(name(*e.collective)) + " twice");
      entry.remove_prefix(colon + 1);
    } else if (i > 0) {
      throw InputError("", 0,
                       std::string(what) + ": expected 'collective:' before entry " + std::to_string(i + 1) +
                           " (only the first may omit it); found " + in_quotes(entries[i]));
    }
    if (!entry.empty() && entry.front() == '^') e.exclude = true, entry.remove_prefix(1);
    for (std::string_view token : split(entry, ',')) {
      auto n = parse(token);
      if (!n) {
        std::string names;
        for (auto a : all) names += (names.empty() ? "" : ", ") + std::string(name(a));
        throw InputError("", 0,
                         std::string(what) + ": expected one of " + names + "; found " + in_quotes(token));
      }
      if (std::find(e.names.begin(), e.names.end(), *n) == e.names.end()) e.names.push_back(*n);
    }
    spec.entries.push_back(std::move(e));
  }
  return spec;
}

template <typename Name>
std::string format_spec(const SelectionSpec<Name>& spec) {
  std::string out;
  for (size_t i = 0; i < spec.entries.size(); ++i) {
    const auto& e = spec.entries[i];
    if (i > 0) out += ';';
    if (e.collective) out += std::string(nccl_name(*e.collective)) + ":";
    if (e.exclude) out += '^';
    for (size_t j = 0; j < e.names.size(); ++j) {
      if (j > 0) out += ',';
      out += nccl_name(e.names[j]);
    }
  }
  return out;
}

template <typename Name>
const SelectionEntry<Name>* deciding_entry(const SelectionSpec<Name>& spec, Collective c) {
  for (const auto& e : spec.entries)
    if (e.collective == c) return &e;
  if (!spec.entries.empty() && !spec.entries.front().collective) return &spec.entries.front();
  return nullptr;
}

template <typename Name>
bool lists(const SelectionEntry<Name>& e, Name n) {
  return std::find(e.names.begin(), e.names.end(), n) != e.names.end();
}

template <typename Name>
bool selects_name(const SelectionSpec<Name>& spec, Collective c, Name n) {
  const auto* e = deciding_entry(spec, c);
  return !e || lists(*e, n) != e->exclude;
}

}  // namespace

bool selects(const AlgoSpec& spec, Collective c, Algorithm name) {
  return selects_name(spec, c, name);
}
bool selects(const ProtoSpec& spec, Collective c, Protocol name) {
  return selects_name(spec, c, name);
}
bool selects_explicitly(const ProtoSpec& spec, Collective c, Protocol name) {
  const auto* e = deciding_entry(spec, c);
  return e && !e->exclude && lists(*e, name);
}

AlgoSpec parse_algo_spec(std::string_view text) {
  return parse_spec<Algorithm>(text, "NCCL_ALGO", parse_algorithm, kAllAlgorithms);
}
ProtoSpec parse_proto_spec(std::string_view text) {
  return parse_spec<Protocol>(text, "NCCL_PROTO", parse_protocol, kAllProtocols);
}
std::string format_algo_spec(const AlgoSpec& spec) {
  return format_spec(spec);
}
std::string format_proto_spec(const ProtoSpec& spec) {
  return format_spec(spec);
}

}  // namespace autotune::nccl
