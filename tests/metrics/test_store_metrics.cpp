// What `metrics` reads from a store (metrics/store_metrics.hpp): a profile with one AllReduce rule at 1 MiB
// on 2x8 (Ring/LL, calibrated at 110 GB/s, runner-up Tree/Simple), and telemetry of two jobs: the rule's
// choice at 80 GB/s (150 calls), its runner-up explored at 100 GB/s (50 calls), NCCL's own choice at 4 MiB
// where no rule applies. The figures are the telemetry's, weighted by calls; the age, the decisions and the
// upkeep records are what the store holds; folded telemetry counts inside the window only; a file learn would
// refuse is counted as refused, never as production.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "common/utc_time.hpp"
#include "metrics/store_metrics.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/store.hpp"
#include "profiles/telemetry_file.hpp"
#include "profiles/upkeep_record.hpp"
#include "support/temp_dir.hpp"

using namespace autotune;
using nccl::Algorithm;
using nccl::Collective;
using nccl::Protocol;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kNow = 1764547200;  // 2025-12-01T00:00:00Z

// The GPU time of an AllReduce of 1 MiB over 16 ranks at `gbps` of bus bandwidth: 2 * 15/16 of the bytes.
double us_at(double gbps, double bytes = 1048576.0) {
  return bytes * 2 * 15 / 16 / (gbps * 1e3);
}

profiles::TelemetryRow row(int log2, Algorithm a, Protocol p, uint64_t count, double us) {
  profiles::TelemetryRow r;
  r.nodes = 2, r.ranks = 16, r.ranks_per_node = 8, r.bytes_log2 = log2, r.count = count;
  r.algorithm = a, r.protocol = p, r.channels = 8, r.mean_bytes = static_cast<double>(uint64_t{1} << log2);
  r.mean_us = us, r.p25_us = us * 0.95, r.p50_us = us, r.p75_us = us * 1.05;
  r.p90_us = us * 1.07, r.p99_us = us * 1.1, r.min_us = us * 0.9, r.max_us = us * 1.2;
  return r;
}

struct MetricsStore {
  test::TempDir dir{"metrics"};
  fs::path store = dir.path() / "store";
  fs::path profile;
  std::string digest;

  MetricsStore() {
    profiles::Profile p;
    p.cluster.name = "c1";
    p.provenance.created = utc_timestamp(kNow - 3600);
    p.provenance.nccl_version = "2.28.9";
    profiles::Rule r;
    r.collective = Collective::allreduce;
    r.min_bytes = 512 << 10, r.max_bytes = 2 << 20;
    r.algorithm = Algorithm::ring, r.protocol = Protocol::ll;
    r.nodes = profiles::CountRange{2, 2};
    r.ranks = profiles::CountRange{16, 16};
    r.busbw_gbps = 110.0;
    r.default_busbw_gbps = 100.0;
    r.runner_up = profiles::Rule::RunnerUp{Algorithm::tree, Protocol::simple, 0, 105.0};
    p.rules = {r};
    profile = profiles::Store(store).save(p);
    digest = profiles::file_digest_text(profile);
  }

  fs::path telemetry(const std::string& where, const std::string& job, int64_t written,
                     std::vector<profiles::TelemetryRow> rows) const {
    profiles::Telemetry t;
    t.digest = digest, t.cluster = "c1", t.nccl_version = "2.28.9", t.job = job, t.rank = "0";
    t.written = written;
    t.rows = std::move(rows);
    const fs::path folder = store / where;
    fs::create_directories(folder);
    const fs::path file = folder / profiles::telemetry_file_name(digest, job, "0");
    write_file_atomically(file, profiles::format_telemetry(t));
    return file;
  }

  std::string text(metrics::StoreMetrics* out = nullptr) const {
    metrics::MetricsOptions o;
    o.now = kNow;
    auto m = metrics::collect_store_metrics(store, o);
    if (out) *out = m;
    return metrics::format_exposition(m.families);
  }
};

// The value of the series `series` (name and labels exactly as written), or NaN when it is absent.
double value(const std::string& text, const std::string& series) {
  const size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return std::nan("");
  return std::strtod(text.c_str() + at + series.size() + 2, nullptr);
}

const std::string kBucket =
    "cluster=\"c1\",nccl=\"2.28\",shape=\"2x8\",collective=\"allreduce\",size_bucket=\"1048576\"";

}  // namespace

TEST_CASE("production busbw, the profile's expectation and who decided, per bucket", "[metrics]") {
  MetricsStore s;
  s.telemetry("telemetry", "j1", kNow - 60,
              {row(20, Algorithm::ring, Protocol::ll, 150, us_at(80)),
               row(22, Algorithm::ring, Protocol::simple, 10, us_at(90, 4194304.0))});
  s.telemetry("telemetry", "j2", kNow - 60, {row(20, Algorithm::tree, Protocol::simple, 50, us_at(100))});
  const std::string t = s.text();
  CHECK(value(t, "nccl_autotune_production_busbw_bytes_per_second{" + kBucket + "}") ==
        Approx((150 * 80.0 + 50 * 100.0) / 200 * 1e9));
  CHECK(value(t, "nccl_autotune_expected_busbw_bytes_per_second{" + kBucket + "}") == Approx(110e9));
  CHECK(value(t, "nccl_autotune_production_time_spread_ratio{" + kBucket + "}") == Approx(0.10));
  CHECK(value(t, "nccl_autotune_calls_decided_ratio{" + kBucket + ",decided_by=\"rule\"}") == Approx(0.75));
  CHECK(value(t, "nccl_autotune_calls_decided_ratio{" + kBucket + ",decided_by=\"explore\"}") ==
        Approx(0.25));
  CHECK(value(t, "nccl_autotune_calls_decided_ratio{" + kBucket + ",decided_by=\"nccl\"}") == 0.0);
  const std::string big =
      "cluster=\"c1\",nccl=\"2.28\",shape=\"2x8\",collective=\"allreduce\",size_bucket=\"4194304\"";
  CHECK(value(t, "nccl_autotune_production_busbw_bytes_per_second{" + big + "}") == Approx(90e9));
  CHECK(value(t, "nccl_autotune_calls_decided_ratio{" + big + ",decided_by=\"nccl\"}") == 1.0);
  // No rule there and no calibration journal: nothing was expected, and nothing is made up.
  CHECK(t.find("nccl_autotune_expected_busbw_bytes_per_second{" + big) == std::string::npos);
  CHECK(value(t, "nccl_autotune_telemetry_pending_files{cluster=\"c1\",nccl=\"2.28\"}") == 2);
  CHECK(value(t, "nccl_autotune_telemetry_pending_calls{cluster=\"c1\",nccl=\"2.28\"}") == 210);
}

TEST_CASE("the profile version in use and its age", "[metrics]") {
  MetricsStore s;
  const std::string t = s.text();
  CHECK(value(t, "nccl_autotune_profile_info{cluster=\"c1\",nccl=\"2.28\",digest=\"" + s.digest +
                     "\",source=\"measured\"}") == 1);
  CHECK(value(t, "nccl_autotune_profile_age_seconds{cluster=\"c1\",nccl=\"2.28\"}") == 3600);
  CHECK(value(t, "nccl_autotune_profile_created_timestamp_seconds{cluster=\"c1\",nccl=\"2.28\"}") ==
        kNow - 3600);
  CHECK(value(t, "nccl_autotune_profile_rules{cluster=\"c1\",nccl=\"2.28\"}") == 1);
  CHECK(value(t, "nccl_autotune_telemetry_pending_files{cluster=\"c1\",nccl=\"2.28\"}") == 0);
  CHECK(t.find("nccl_autotune_production_busbw") == std::string::npos);
}

TEST_CASE("telemetry learn folded counts inside the window only, and is not pending", "[metrics]") {
  MetricsStore s;
  s.telemetry("telemetry/learned", "old", kNow - 2 * 86400,
              {row(20, Algorithm::ring, Protocol::ll, 100, us_at(40))});
  s.telemetry("telemetry/learned", "recent", kNow - 3600,
              {row(20, Algorithm::ring, Protocol::ll, 100, us_at(80))});
  const std::string t = s.text();
  CHECK(value(t, "nccl_autotune_production_busbw_bytes_per_second{" + kBucket + "}") == Approx(80e9));
  CHECK(value(t, "nccl_autotune_telemetry_pending_files{cluster=\"c1\",nccl=\"2.28\"}") == 0);
}

TEST_CASE("telemetry learn would refuse is counted as refused, never as production", "[metrics]") {
  MetricsStore s;
  const fs::path planted =
      s.telemetry("telemetry", "j9", kNow - 60, {row(20, Algorithm::ring, Protocol::ll, 500, us_at(5))});
  ::chmod(planted.c_str(), 0666);  // anyone could have written it
  const std::string t = s.text();
  CHECK(value(t, "nccl_autotune_telemetry_refused_files") == 1);
  CHECK(value(t, "nccl_autotune_telemetry_pending_files{cluster=\"c1\",nccl=\"2.28\"}") == 0);
  CHECK(t.find("nccl_autotune_production_busbw") == std::string::npos);
}

TEST_CASE("the last verify and health check, as the store records them", "[metrics]") {
  MetricsStore s;
  profiles::write_upkeep_record(s.store, {"verify",
                                          "c1",
                                          "fail",
                                          kNow - 600,
                                          "1 rule now loses",
                                          {{"nccl", "2.28.9"}, {"driver", "550.54.15"}}});
  profiles::write_upkeep_record(
      s.store, {"check", "n2", "block", kNow - 60, "mlx5_1 at half rate", {{"drained", "true"}}});
  profiles::write_upkeep_record(s.store, {"check", "n1", "ok", kNow - 30, "", {}});
  const auto back = profiles::read_upkeep_record(s.store, "verify", "c1");
  REQUIRE(back);
  CHECK(back->facts.at("driver") == "550.54.15");
  CHECK(back->detail == "1 rule now loses");
  const std::string t = s.text();
  CHECK(value(t, "nccl_autotune_verify_last_success{cluster=\"c1\"}") == 0);
  CHECK(value(t, "nccl_autotune_verify_last_run_timestamp_seconds{cluster=\"c1\"}") == kNow - 600);
  CHECK(value(t, "nccl_autotune_verify_last_run_age_seconds{cluster=\"c1\"}") == 600);
  CHECK(value(t, "nccl_autotune_check_last_success{node=\"n2\"}") == 0);
  CHECK(value(t, "nccl_autotune_check_node_drained{node=\"n2\"}") == 1);
  CHECK(value(t, "nccl_autotune_check_last_success{node=\"n1\"}") == 1);
  CHECK(value(t, "nccl_autotune_check_node_drained{node=\"n1\"}") == 0);
}

TEST_CASE("an upkeep record that is not one is named with its line and left out", "[metrics]") {
  MetricsStore s;
  s.dir.write("store/status/verify-c1.toml",
              "command = \"verify\"\nsubject = \"c1\"\nresult = \"ok\"\ntime = \"soon\"\n");
  metrics::StoreMetrics m;
  const std::string t = s.text(&m);
  REQUIRE(m.warnings.size() == 1);
  CHECK_THAT(m.warnings[0], Catch::Contains("verify-c1.toml:4: expected time = <unix seconds>"));
  CHECK(t.find("nccl_autotune_verify_") == std::string::npos);
  CHECK_THROWS_AS(profiles::write_upkeep_record(s.store, {"tune", "c1", "ok", 0, "", {}}), InputError);
}
