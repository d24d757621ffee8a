#include "topology/hwloc_xml_checks.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/input_error.hpp"
#include "topology/xml_sources.hpp"

namespace autotune::topology::detail {
namespace {

// hwloc sets bit os_index of a cpuset (PU) or nodeset (NUMANode) for these objects, and takes a missing one
// as 2^32-1: a 19-byte edit made it allocate and clear 512 MB (found by fuzz_hwloc_xml). hwloc exports an
// os_index on every PU and NUMA node; a million is far beyond any machine's CPU numbering.
constexpr unsigned long kMaxOsIndex = (1UL << 20) - 1;

void require_os_index(const pugi::xml_node& object, const std::string& file, std::string_view text) {
  const std::string_view type = object.attribute("type").value();
  const pugi::xml_attribute attribute = object.attribute("os_index");
  const std::string_view value = attribute.value();
  unsigned long index = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), index);
  if (!attribute || error != std::errc() || end != value.data() + value.size() || index > kMaxOsIndex)
    throw InputError(file, line_at(text, object.offset_debug()),
                     "expected an os_index attribute 0.." + std::to_string(kMaxOsIndex) +
                         " on this <object type=\"" + std::string(type) + "\">, found " +
                         (attribute ? "\"" + std::string(value) + "\"" : std::string("none")));
}

// A bitmap as hwloc writes it, least significant 32-bit word first; `infinite`: every bit above them set.
struct Bitmap {
  std::vector<uint32_t> words;
  bool infinite = false;

  uint32_t word(size_t i) const { return i < words.size() ? words[i] : infinite ? 0xFFFFFFFFu : 0; }
  bool within(const Bitmap& other) const {
    if (infinite && !other.infinite) return false;
    for (size_t i = 0; i < std::max(words.size(), other.words.size()); ++i)
      if (word(i) & ~other.word(i)) return false;
    return true;
  }
  bool meets(const Bitmap& other) const {
    if (infinite && other.infinite) return true;
    for (size_t i = 0; i < std::max(words.size(), other.words.size()); ++i)
      if (word(i) & other.word(i)) return true;
    return false;
  }
};

// hwloc 2.9 asserts (an abort, in Debian's build) on a bitmap whose first word is empty or not hex, such as
// complete_cpuset=",x00000001" (found by fuzz_hwloc_xml). Accepted here: what hwloc writes, an optional
// "0xf...f" (infinite) prefix, then words of 1 to 8 hex digits with an optional 0x, separated by commas; a
// word after the first may be empty (hwloc writes ",," for zero words). nullopt for anything else.
std::optional<Bitmap> parse_hwloc_bitmap(std::string_view text) {
  Bitmap b;
  constexpr std::string_view kInfinite = "0xf...f";
  if (text.substr(0, kInfinite.size()) == kInfinite) {
    b.infinite = true;
    text.remove_prefix(kInfinite.size());
    if (text.empty()) return b;
    if (text.front() != ',') return std::nullopt;
    text.remove_prefix(1);
  }
  for (;;) {
    const size_t comma = text.find(',');
    const std::string_view word = text.substr(0, comma);
    std::string_view digits = word;
    if (digits.size() >= 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
      digits.remove_prefix(2);
    const bool hex = std::all_of(digits.begin(), digits.end(),
                                 [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
    if (!hex || digits.size() > 8 || (digits.empty() && (b.words.empty() || !word.empty())))
      return std::nullopt;
    uint32_t value = 0;
    std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
    b.words.push_back(value);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  std::reverse(b.words.begin(), b.words.end());
  return b;
}

void require_bitmaps(const pugi::xml_node& node, const std::string& file, std::string_view text) {
  for (const pugi::xml_node& child : node.children()) {
    for (const pugi::xml_attribute& attribute : child.attributes()) {
      const std::string_view name = attribute.name();
      if (name.size() < 3 || name.substr(name.size() - 3) != "set") continue;  // cpuset, nodeset, allowed_...
      if (!parse_hwloc_bitmap(attribute.value()))
        throw InputError(file, line_at(text, child.offset_debug()),
                         "expected " + std::string(name) +
                             " to be an hwloc bitmap (0x-prefixed hex words separated by commas, such as "
                             "0x000000ff,0x00000001); found \"" +
                             attribute.value() + "\"");
    }
    require_bitmaps(child, file, text);
  }
}

// hwloc stores bridge_type="U-D" and osdev_type="N" into C enums unchecked, and the conversion reads them:
// a value outside the enum is undefined behaviour there (found by fuzz_hwloc_xml with bridge_type="2-1").
// hwloc 2.9 knows bridge ends 0 (host) and 1 (PCI), and OS device types 0..5.
void require_known_kinds(const pugi::xml_node& object, const std::string& file, std::string_view text) {
  const auto refuse = [&](const char* name, const char* expected) {
    throw InputError(file, line_at(text, object.offset_debug()),
                     std::string("expected ") + name + " " + expected + "; found \"" +
                         object.attribute(name).value() + "\"");
  };
  if (const pugi::xml_attribute bridge = object.attribute("bridge_type")) {
    const std::string_view v = bridge.value();
    if (v.size() != 3 || (v[0] != '0' && v[0] != '1') || v[1] != '-' || (v[2] != '0' && v[2] != '1'))
      refuse("bridge_type", "U-D, U and D each 0 (host) or 1 (PCI)");
  }
  if (const pugi::xml_attribute osdev = object.attribute("osdev_type")) {
    const std::string_view v = osdev.value();
    if (v.size() != 1 || v[0] < '0' || v[0] > '5') refuse("osdev_type", "0..5");
  }
}

// hwloc 2.9 trusts the sets of CPU-side objects: one without a complete_cpuset crashes inside
// hwloc_topology_load (found by the bad-inputs table). Every such object hwloc itself exports carries all
// four sets, so refuse the file, with its line, before hwloc sees it. I/O and Misc objects have no sets.
void require_object_sets(const pugi::xml_node& node, const std::string& file, std::string_view text) {
  for (const pugi::xml_node& object : node.children("object")) {
    const std::string_view type = object.attribute("type").value();
    const bool io_or_misc = type == "Bridge" || type == "PCIDev" || type == "OSDev" || type == "Misc";
    if (type == "PU" || type == "NUMANode") require_os_index(object, file, text);
    require_known_kinds(object, file, text);
    if (!io_or_misc) {
      for (const char* set : {"cpuset", "complete_cpuset", "nodeset", "complete_nodeset"}) {
        if (!object.attribute(set))
          throw InputError(file, line_at(text, object.offset_debug()),
                           "expected a " + std::string(set) + " attribute on this <object type=\"" +
                               std::string(type) + "\"> (every CPU-side hwloc object has one), found none");
      }
    }
    require_object_sets(object, file, text);
  }
}

// hwloc aborts ("Topology became empty") and then crashes when an object's cpuset or nodeset holds what its
// complete set lacks, or when the machine's allowed sets miss its own (found by fuzz_hwloc_xml).
void require_set_relations(const pugi::xml_node& node, bool root, const std::string& file,
                           std::string_view text) {
  for (const pugi::xml_node& object : node.children("object")) {
    const auto set = [&](const char* name) -> std::optional<Bitmap> {
      const pugi::xml_attribute a = object.attribute(name);
      return a ? parse_hwloc_bitmap(a.value()) : std::nullopt;  // syntax checked by require_bitmaps
    };
    const auto refuse = [&](const std::string& what) {
      throw InputError(file, line_at(text, object.offset_debug()),
                       "expected " + what + ", as hwloc writes it");
    };
    for (const char* kind : {"cpuset", "nodeset"}) {
      const std::string name = kind, complete = "complete_" + name, allowed = "allowed_" + name;
      const auto own = set(kind), full = set(complete.c_str()), permitted = set(allowed.c_str());
      if (own && full && !own->within(*full)) refuse(name + " within " + complete);
      if (root && permitted && full && !permitted->within(*full)) refuse(allowed + " within " + complete);
      if (root && permitted && own && !permitted->meets(*own))
        refuse(allowed + " to share a bit with " + name);
    }
    require_set_relations(object, false, file, text);
  }
}

}  // namespace

void check_before_hwloc(const pugi::xml_node& topology, const std::string& file, std::string_view text) {
  require_bitmaps(topology, file, text);
  require_object_sets(topology, file, text);
  require_set_relations(topology, true, file, text);
}

}  // namespace autotune::topology::detail
