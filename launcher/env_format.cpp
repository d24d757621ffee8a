#include "launcher/env_format.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/input_error.hpp"

namespace autotune::launcher {

EnvFormat parse_env_format(std::string_view text) {
  if (text == "sh") return EnvFormat::sh;
  if (text == "slurm") return EnvFormat::slurm;
  if (text == "json") return EnvFormat::json;
  throw InputError("<arguments>", 0, "--format must be sh, slurm or json, not '" + std::string(text) + "'");
}

std::string sh_quote(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

namespace {

std::string json_text(const LaunchPlan& plan) {
  nlohmann::ordered_json j;
  j["tuned"] = plan.tuned();
  j["problem"] = std::string(name(plan.problem));
  j["problem_text"] = plan.problem_text;
  j["profile"] =
      plan.profile_path ? nlohmann::ordered_json(plan.profile_path->string()) : nlohmann::ordered_json();
  j["origin"] =
      plan.origin ? nlohmann::ordered_json(std::string(describe(*plan.origin))) : nlohmann::ordered_json();
  j["store"] = plan.store ? nlohmann::ordered_json(plan.store->string()) : nlohmann::ordered_json();
  j["source"] = plan.profile
                    ? nlohmann::ordered_json(std::string(profiles::name(plan.profile->provenance.source)))
                    : nlohmann::ordered_json();
  j["fingerprint"] = plan.fingerprint ? nlohmann::ordered_json(*plan.fingerprint) : nlohmann::ordered_json();
  j["fingerprint_from_cache"] = plan.fingerprint_from_cache;
  nlohmann::ordered_json nccl;
  nccl["library"] =
      plan.nccl.library ? nlohmann::ordered_json(plan.nccl.library->string()) : nlohmann::ordered_json();
  nccl["version"] =
      plan.nccl.version ? nlohmann::ordered_json(plan.nccl.version->text()) : nlohmann::ordered_json();
  nccl["found_through"] = plan.nccl.how;
  j["job_nccl"] = std::move(nccl);
  j["digest"] = plan.digest.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(plan.digest);
  j["pinned_by"] = plan.pinned_by ? nlohmann::ordered_json(*plan.pinned_by) : nlohmann::ordered_json();
  auto vars = nlohmann::ordered_json::array();
  for (const EnvVar& v : plan.vars) {
    nlohmann::ordered_json o;
    o["name"] = v.name;
    o["value"] = v.value();
    o["wanted"] = v.wanted;
    o["origin"] = std::string(describe(v.origin));
    o["decision"] = std::string(name(v.decision));
    o["user_value"] = v.user_value ? nlohmann::ordered_json(*v.user_value) : nlohmann::ordered_json();
    o["export"] = v.needs_export();
    vars.push_back(std::move(o));
  }
  j["variables"] = std::move(vars);
  j["notes"] = plan.notes;
  return j.dump(2) + "\n";
}

}  // namespace

std::string format_env(const LaunchPlan& plan, EnvFormat format) {
  if (format == EnvFormat::json) return json_text(plan);
  std::string out;
  for (const EnvVar& v : plan.vars) {
    if (!v.needs_export()) continue;
    if (format == EnvFormat::sh) {
      out += "export " + v.name + "=" + sh_quote(v.value()) + "\n";
    } else {
      if (v.value().find_first_of("\r\n") != std::string::npos)
        throw std::runtime_error(v.name + " holds a line break, which a Slurm TaskProlog cannot export");
      out += "export " + v.name + "=" + v.value() + "\n";
    }
  }
  return out;
}

std::string format_dry_run(const LaunchPlan& plan, const std::vector<std::string>& command) {
  std::string out;
  if (plan.profile_path)
    out +=
        "profile: " + plan.profile_path->string() + " (from " + std::string(describe(*plan.origin)) + ")\n";
  if (plan.profile) out += "source: " + std::string(profiles::name(plan.profile->provenance.source)) + "\n";
  if (!plan.digest.empty())
    out += "version: " + plan.digest + (plan.pinned_by ? " (pinned by " + *plan.pinned_by + ")" : "") + "\n";
  if (plan.store) out += "store: " + plan.store->string() + "\n";
  if (plan.nccl.version)
    out += "job's NCCL: " + plan.nccl.version->text() + " (" + plan.nccl.library->string() +
           ", found through " + plan.nccl.how + ")\n";
  if (plan.fingerprint)
    out += "node fingerprint: " + *plan.fingerprint +
           (plan.fingerprint_from_cache ? " (cached)" : " (probed)") + "\n";
  for (const auto& d : plan.details) out += "note: " + d + "\n";
  for (const auto& n : plan.notes) out += "note: " + n + "\n";
  if (!plan.tuned()) {
    out += "not tuned: " + plan.problem_text + "\n";
  } else {
    for (const EnvVar& v : plan.vars) {
      out += v.name + "=" + sh_quote(v.value()) + "  # " + std::string(describe(v.origin));
      switch (v.decision) {
        case VarDecision::set:
          out += ", set";
          break;
        case VarDecision::unchanged:
          out += ", already set to this";
          break;
        case VarDecision::kept_user:
          out += ", your value kept (profile: " + sh_quote(v.wanted) + ")";
          break;
        case VarDecision::overridden_user:
          out += ", overrides your " + sh_quote(*v.user_value);
          break;
      }
      out += "\n";
    }
  }
  if (!command.empty()) {
    out += "would run:";
    for (const auto& a : command) out += " " + sh_quote(a);
    out += "\n";
  }
  return out;
}

}  // namespace autotune::launcher
