#include "calibrate/previous_shapes.hpp"

#include <set>

#include "common/input_error.hpp"
#include "nccl/version.hpp"
#include "profiles/profile_merge.hpp"
#include "profiles/profile_toml.hpp"
#include "profiles/store.hpp"

namespace autotune::calibrate {

namespace {

bool of_measured_shape(const profiles::Rule& r, const std::vector<runners::Scale>& measured) {
  for (const auto& s : measured)
    if (r.applies_to(profiles::CommShape::of(s.nodes, s.ranks))) return true;
  return false;
}

std::string shapes_text(const std::vector<profiles::Rule>& rules) {
  std::set<std::string> shapes;
  for (const auto& r : rules) {
    std::string s = r.nodes ? std::to_string(r.nodes->min) : std::string("any");
    s += "x" + (r.ranks_per_node ? std::to_string(r.ranks_per_node->min) : std::string("any"));
    shapes.insert(s);
  }
  std::string out;
  for (const auto& s : shapes) out += (out.empty() ? "" : ", ") + s;
  return out;
}

bool same_major_minor(const std::string& a, const std::string& b) {
  auto va = nccl::Version::parse(a), vb = nccl::Version::parse(b);
  return va && vb && va->same_major_minor(*vb);
}

}  // namespace

std::optional<PreviousVersion> current_version(const std::filesystem::path& store,
                                               const search::JournalHeader& header, bool keep) {
  profiles::Profile probe;
  probe.cluster.name = header.cluster;
  probe.provenance.nccl_version = header.nccl_version;
  const std::filesystem::path file = profiles::Store(store).path_for(probe);
  if (!std::filesystem::exists(file)) return std::nullopt;
  PreviousVersion v{file, {}};
  try {
    v.profile = profiles::read_profile(file);
  } catch (const InputError&) {
    if (keep) throw;  // --add-shapes needs it: its own error names the file and line
    return std::nullopt;
  }
  if (!keep) return v;
  auto refuse = [&](const std::string& what, const std::string& theirs, const std::string& ours) {
    throw InputError(file.string(), 0,
                     "--add-shapes: expected a current version made under the same conditions, found " +
                         what + " " + theirs + " where this calibration has " + ours +
                         " (calibrate without --add-shapes, or under another --name)");
  };
  // What is known before measuring (on GPUs under an orchestrator the fingerprint and the source come with
  // the jobs' results): the rest is checked when the rules join.
  const profiles::Provenance& p = v.profile.provenance;
  if (!header.fingerprint.empty() && v.profile.cluster.fingerprint != header.fingerprint)
    refuse("fingerprint", v.profile.cluster.fingerprint, header.fingerprint);
  if (!same_major_minor(p.nccl_version, header.nccl_version))
    refuse("NCCL", p.nccl_version, header.nccl_version);
  return v;
}

void carry_previous_shapes(profiles::Profile& fresh, const PreviousVersion& previous,
                           const std::vector<runners::Scale>& measured, bool keep,
                           std::vector<std::string>& notes) {
  profiles::Profile others = previous.profile;
  others.rules.clear();
  for (const auto& r : previous.profile.rules)
    if (!of_measured_shape(r, measured)) others.rules.push_back(r);
  if (others.rules.empty()) return;
  const std::string count = std::to_string(others.rules.size()) + " rule(s) of shapes not calibrated now (" +
                            shapes_text(others.rules) + ")";
  if (!keep) {
    notes.push_back("the previous version's " + count + " are not in the new version (" +
                    previous.file.string() +
                    " as it was stays readable in the store's versions/; --add-shapes keeps them)");
    return;
  }
  const std::string command = fresh.provenance.command, created = fresh.provenance.created;
  try {
    fresh = profiles::merge_profiles({fresh, "this calibration"}, {others, previous.file.string()});
  } catch (const InputError& e) {
    throw InputError(e.file(), e.line(),
                     e.message() +
                         " (--add-shapes; the journal holds this calibration: tune --from-journal "
                         "derives it alone)");
  }
  fresh.provenance.command = command;
  fresh.provenance.created = created;
  notes.push_back("--add-shapes: kept the previous version's " + count);
}

}  // namespace autotune::calibrate
