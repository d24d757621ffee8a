#pragma once
// What hwloc 2.9 (Debian bookworm) trusts in an hwloc XML document and crashes, asserts, allocates without
// bound or hands back undefined values on when it is wrong: checked here, with the line, before hwloc sees
// the text. Each rule is one hwloc itself keeps in every file it exports; each was found by the bad-inputs
// table or fuzz_hwloc_xml (docs/reliability.md lists them).

#include <pugixml.hpp>

#include <string>
#include <string_view>

namespace autotune::topology::detail {

// Throws InputError(file, line, ...) on the first object that breaks a rule.
void check_before_hwloc(const pugi::xml_node& topology, const std::string& file, std::string_view text);

}  // namespace autotune::topology::detail
