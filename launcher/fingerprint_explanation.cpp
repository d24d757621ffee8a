#include "launcher/fingerprint_explanation.hpp"

#include <nlohmann/json.hpp>

#include "nccl/version.hpp"
#include "topology/fingerprint.hpp"

namespace autotune::launcher {

namespace {

std::string major_minor_text(int mm) {
  return nccl::Version{mm / 100, mm % 100, 0}.major_minor_text();
}

}  // namespace

FingerprintExplanation explain_fingerprint(const topology::Topology& node, const JobNccl& nccl,
                                           int built_major_minor) {
  FingerprintExplanation e;
  if (nccl.version) {
    e.nccl_major_minor = nccl.version->major_minor();
    e.nccl_from = nccl.version->text() + " (" + nccl.library->string() + ", through " + nccl.how + ")";
  } else {
    e.nccl_major_minor = built_major_minor;
    e.nccl_from = major_minor_text(built_major_minor) +
                  ", which this tool was built with: the job's NCCL is not known (" + nccl.how + ")";
  }
  e.fingerprint = topology::fingerprint(node, e.nccl_major_minor);
  e.facts = topology::fingerprint_facts(node, e.nccl_major_minor);
  return e;
}

void compare_with(FingerprintExplanation& e, const profiles::Profile& profile, const std::string& path) {
  FingerprintAgainst a;
  a.profile = path;
  a.fingerprint = profile.cluster.fingerprint;
  a.matches = a.fingerprint == e.fingerprint;
  a.has_facts = !profile.cluster.fingerprint_facts.empty();
  if (a.has_facts)
    a.differences = topology::fingerprint_differences(profile.cluster.fingerprint_facts, e.facts);
  e.against = std::move(a);
}

std::string to_text(const FingerprintExplanation& e) {
  std::string out = "fingerprint " + e.fingerprint + " for NCCL " + e.nccl_from + "\nfacts hashed:\n";
  for (const auto& f : e.facts) out += "  " + f + "\n";
  if (!e.against) return out;
  const FingerprintAgainst& a = *e.against;
  out += "profile " + a.profile + ": fingerprint " + (a.fingerprint.empty() ? "(none)" : a.fingerprint);
  if (a.matches) return out + ", the same kind of node\n";
  out += ", another kind of node\n";
  if (!a.has_facts)
    return out +
           "  the profile keeps no facts (written before they were kept): recalibrate to see what differs\n";
  // The same facts and another hash: the hash itself changed (another tool version), not the node.
  if (a.differences.empty())
    return out + "  the same facts: the profile was fingerprinted by another version of this tool\n";
  for (const auto& d : a.differences) out += "  " + d + "\n";
  return out;
}

std::string to_json(const FingerprintExplanation& e) {
  nlohmann::ordered_json j;
  j["schema"] = 1;
  j["fingerprint"] = e.fingerprint;
  j["nccl_major_minor"] = major_minor_text(e.nccl_major_minor);
  j["nccl_from"] = e.nccl_from;
  j["facts"] = e.facts;
  if (e.against) {
    const FingerprintAgainst& a = *e.against;
    j["against"] = {{"profile", a.profile},
                    {"fingerprint", a.fingerprint},
                    {"matches", a.matches},
                    {"has_facts", a.has_facts},
                    {"differences", a.differences}};
  }
  return j.dump(2) + "\n";
}

}  // namespace autotune::launcher
