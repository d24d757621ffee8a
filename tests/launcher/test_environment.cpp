#include <catch2/catch.hpp>
#include <map>

#include "launcher/env_format.hpp"
#include "launcher/environment.hpp"

using namespace autotune::launcher;

namespace {
EnvLookup lookup(std::map<std::string, std::string> env) {
  return [env](const std::string& n) -> std::optional<std::string> {
    auto it = env.find(n);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}
const EnvVar& find(const std::vector<EnvVar>& vars, const std::string& n) {
  for (const auto& v : vars)
    if (v.name == n) return v;
  throw std::runtime_error("no " + n);
}
EnvRequest request() {
  return {{{"NCCL_IB_HCA", "=mlx5_0,mlx5_1"}, {"NCCL_CROSS_NIC", "1"}},
          "/opt/lib/libnccl-tuner-autotune.so",
          "/store/a.toml",
          false,
          ""};
}
}  // namespace

TEST_CASE("the profile's env, then the plugin and the profile path", "[environment]") {
  auto vars = plan_environment(request(), lookup({}));
  REQUIRE(vars.size() == 4);
  CHECK(vars[0].name == "NCCL_CROSS_NIC");
  CHECK(vars[1].name == "NCCL_IB_HCA");
  CHECK(vars[2].name == "NCCL_TUNER_PLUGIN");
  CHECK(vars[2].value() == "/opt/lib/libnccl-tuner-autotune.so");
  CHECK(vars[2].origin == VarOrigin::plugin_library);
  CHECK(vars[3].name == "NCCL_AUTOTUNE_PROFILE");
  CHECK(vars[3].value() == "/store/a.toml");
  for (const auto& v : vars) CHECK(v.decision == VarDecision::set);
  CHECK(user_conflicts_line(vars).empty());
}

TEST_CASE("the user's values win unless overridden, and are reported", "[environment]") {
  auto env =
      lookup({{"NCCL_IB_HCA", "mlx5_4"}, {"NCCL_CROSS_NIC", "1"}, {"NCCL_AUTOTUNE_PROFILE", "/old.toml"}});
  auto vars = plan_environment(request(), env);
  CHECK(find(vars, "NCCL_IB_HCA").decision == VarDecision::kept_user);
  CHECK(find(vars, "NCCL_IB_HCA").value() == "mlx5_4");
  CHECK_FALSE(find(vars, "NCCL_IB_HCA").needs_export());
  CHECK(find(vars, "NCCL_CROSS_NIC").decision == VarDecision::unchanged);
  // The profile variable always names the profile resolved, so the plugin reads what was exported.
  CHECK(find(vars, "NCCL_AUTOTUNE_PROFILE").decision == VarDecision::overridden_user);
  CHECK(user_conflicts_line(vars) ==
        "keeping your NCCL_IB_HCA=mlx5_4 (profile: =mlx5_0,mlx5_1); --override lets the profile win; "
        "overriding your NCCL_AUTOTUNE_PROFILE=/old.toml (profile: /store/a.toml)");

  EnvRequest r = request();
  r.override_user = true;
  vars = plan_environment(r, env);
  CHECK(find(vars, "NCCL_IB_HCA").decision == VarDecision::overridden_user);
  CHECK(find(vars, "NCCL_IB_HCA").value() == "=mlx5_0,mlx5_1");
}

TEST_CASE("a profile cannot set the launcher's own variables", "[environment]") {
  EnvRequest r = request();
  r.profile_env["NCCL_TUNER_PLUGIN"] = "/evil.so";
  auto vars = plan_environment(r, lookup({}));
  CHECK(find(vars, "NCCL_TUNER_PLUGIN").value() == "/opt/lib/libnccl-tuner-autotune.so");
  CHECK(vars.size() == 4);
}

TEST_CASE("sh quoting survives single quotes", "[env_format]") {
  CHECK(sh_quote("plain") == "'plain'");
  CHECK(sh_quote("it's") == "'it'\\''s'");
  CHECK(sh_quote("") == "''");
}

TEST_CASE("a pinned job carries its digest, whatever the user exported", "[environment]") {
  EnvRequest pinned = request();
  pinned.digest = "0123456789abcdef";
  pinned.profile_env["NCCL_AUTOTUNE_PROFILE_DIGEST"] = "from the profile";  // never taken from [env]
  auto vars = plan_environment(pinned, lookup({{"NCCL_AUTOTUNE_PROFILE_DIGEST", "fedcba9876543210"}}));
  REQUIRE(vars.size() == 5);
  const EnvVar& d = find(vars, "NCCL_AUTOTUNE_PROFILE_DIGEST");
  CHECK(d.value() == "0123456789abcdef");
  CHECK(d.origin == VarOrigin::profile_digest);
  CHECK(d.decision == VarDecision::overridden_user);
  CHECK(describe(d.origin) == "profile digest");
}

TEST_CASE("env formats print only what must change", "[env_format]") {
  LaunchPlan plan;
  plan.profile_path = "/store/a b.toml";
  plan.origin = ProfileOrigin::option_profile;
  plan.vars = plan_environment(
      {{{"NCCL_IB_HCA", "mlx5_0"}, {"NCCL_ALGO", "ring"}}, "/lib/p.so", "/store/a b.toml", false, ""},
      lookup({{"NCCL_ALGO", "tree"}}));
  CHECK(format_env(plan, EnvFormat::sh) ==
        "export NCCL_IB_HCA='mlx5_0'\n"
        "export NCCL_TUNER_PLUGIN='/lib/p.so'\n"
        "export NCCL_AUTOTUNE_PROFILE='/store/a b.toml'\n");
  CHECK(format_env(plan, EnvFormat::slurm) ==
        "export NCCL_IB_HCA=mlx5_0\n"
        "export NCCL_TUNER_PLUGIN=/lib/p.so\n"
        "export NCCL_AUTOTUNE_PROFILE=/store/a b.toml\n");
  std::string json = format_env(plan, EnvFormat::json);
  CHECK(json.find("\"tuned\": true") != std::string::npos);
  CHECK(json.find("\"decision\": \"kept-user\"") != std::string::npos);
  CHECK(json.find("\"profile\": \"/store/a b.toml\"") != std::string::npos);

  LaunchPlan untuned;
  untuned.problem = Problem::no_profile;
  untuned.problem_text = "no profile";
  CHECK(format_env(untuned, EnvFormat::sh).empty());
  CHECK(format_env(untuned, EnvFormat::slurm).empty());
  CHECK(format_env(untuned, EnvFormat::json).find("\"problem\": \"no-profile\"") != std::string::npos);
}

TEST_CASE("slurm refuses values it cannot carry", "[env_format]") {
  LaunchPlan plan;
  plan.vars = plan_environment({{{"NCCL_X", "a\nb"}}, "/p.so", "/a.toml", false, ""}, lookup({}));
  CHECK_THROWS_WITH(format_env(plan, EnvFormat::slurm), Catch::Contains("line break"));
  CHECK_THROWS_WITH(parse_env_format("csh"), Catch::Contains("sh, slurm or json"));
}

TEST_CASE("the dry run names every source and decision", "[env_format]") {
  LaunchPlan plan;
  plan.profile_path = "/store/a.toml";
  plan.origin = ProfileOrigin::env_variable;
  plan.vars = plan_environment({{{"NCCL_ALGO", "ring"}}, "/lib/p.so", "/store/a.toml", false, ""},
                               lookup({{"NCCL_ALGO", "tree"}}));
  std::string text = format_dry_run(plan, {"/bin/echo", "a b"});
  CHECK(text ==
        "profile: /store/a.toml (from NCCL_AUTOTUNE_PROFILE)\n"
        "NCCL_ALGO='tree'  # profile [env], your value kept (profile: 'ring')\n"
        "NCCL_TUNER_PLUGIN='/lib/p.so'  # tuner plugin, set\n"
        "NCCL_AUTOTUNE_PROFILE='/store/a.toml'  # profile path, set\n"
        "would run: '/bin/echo' 'a b'\n");
}
