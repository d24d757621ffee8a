// Many communicators in one process (MoE and 5-D parallel jobs create dozens): the profile is read once and
// its rules compiled once per communicator shape, every later communicator of that shape taking the same
// compiled rules; a shape or NCCL buffer sizes not seen before get their own compile, and a profile changed
// on disk between two inits never reaches the second (one decision per job).
#include <catch2/catch.hpp>

#include "nccl_harness.hpp"
#include "plugin_fixtures.hpp"

using namespace autotune::plugin::test;
using autotune::nccl::Algorithm;
using autotune::nccl::Collective;
using autotune::nccl::Protocol;

namespace shared_rules_test {

constexpr int kAllReduceId = 4, kRingId = 1, kTreeId = 0, kSimpleId = 2;
constexpr uint64_t kOneMiB = 1 << 20;
constexpr const char* kReused = "rules compiled by an earlier communicator of this shape";

struct Init {
  std::string info;  // the communicator's INFO line naming its rules
  std::vector<std::string> warns;
};

Init last_init() {
  Init out;
  for (const auto& l : LogRecorder::instance().take()) {
    if (l.level == NCCL_LOG_INFO && l.text.find("rules apply to") != std::string::npos) out.info = l.text;
    if (l.level == NCCL_LOG_WARN) out.warns.push_back(l.text);
  }
  return out;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace shared_rules_test

using namespace shared_rules_test;

TEST_CASE("communicators of one shape share one compile, another shape or smaller buffers get their own") {
  auto p = base_profile();
  p.rules = {rule(Collective::allreduce, 0, 64 * kOneMiB, Algorithm::ring, Protocol::simple, 2),
             rule(Collective::allgather, 0, kOneMiB, Algorithm::ring, Protocol::simple)};
  p.rules[0].chunk_bytes = 2 << 20;  // NCCL's default buffers hold it; NCCL_BUFFSIZE=2 MiB does not
  ProfileFile file(profile_text(p));
  LogRecorder::instance().take();
  Comm first(6, 16, 2);
  const Init a = last_init();
  CHECK(has(a.info, "2 of 2 rules apply to 2x8 (16 ranks)"));
  CHECK_FALSE(has(a.info, kReused));
  Comm second(6, 16, 2), third(7, 16, 2);
  const Init b = last_init();
  CHECK(has(b.info, kReused));
  for (Comm* c : {&first, &second, &third}) {
    CHECK(c->decide(kAllReduceId, kOneMiB) == forced(kRingId, kSimpleId, 2));
    size_t chunk = 4096;
    c->chunk_size(kAllReduceId, kOneMiB, kRingId, kSimpleId, chunk);
    CHECK(chunk == (2 << 20));
  }
  Comm other_shape(6, 8, 1);
  CHECK_FALSE(has(last_init().info, kReused));
  ScopedEnv small("NCCL_BUFFSIZE", "2097152");
  Comm small_buffers(6, 16, 2);
  const Init d = last_init();
  CHECK_FALSE(has(d.info, kReused));
  REQUIRE(d.warns.size() == 1);
  CHECK(has(d.warns[0], "1 rules keep NCCL's chunk size"));
  size_t chunk = 4096;
  small_buffers.chunk_size(kAllReduceId, kOneMiB, kRingId, kSimpleId, chunk);
  CHECK(chunk == 4096);
  Comm small_again(6, 16, 2);
  CHECK(has(last_init().info, kReused));
}

TEST_CASE("a profile changed on disk between two inits: the second keeps the first's rules, compiled once") {
  auto before = base_profile(), after = base_profile();
  before.rules = {rule(Collective::allreduce, 0, kOneMiB, Algorithm::ring, Protocol::simple, 2)};
  after.rules = {rule(Collective::allreduce, 0, kOneMiB, Algorithm::tree, Protocol::simple, 3)};
  ProfileFile file(profile_text(before));
  LogRecorder::instance().take();
  Comm first(5, 8, 1);
  const Init a = last_init();
  replace_text(file.path, profile_text(after));
  Comm second(5, 8, 1);
  const Init b = last_init();
  // Other ranks of this job may have read the file before the change: every rank decides as they do.
  CHECK(second.decide(kAllReduceId, 100) == forced(kRingId, kSimpleId, 2));
  CHECK(has(b.info, kReused));
  REQUIRE(b.warns.size() == 1);
  CHECK(has(b.warns[0], "changed on disk since this process read it"));
  // The same digest as the first communicator's: the content it read, not the file now on disk.
  const auto digest_at = a.info.find("digest ");
  REQUIRE(digest_at != std::string::npos);
  CHECK(has(b.info, a.info.substr(digest_at, 24)));
  // A profile the job names anew is a new load: its own rules.
  ProfileFile next(profile_text(after));
  Comm third(5, 8, 1);
  CHECK_FALSE(has(last_init().info, kReused));
  CHECK(third.decide(kAllReduceId, 100) == forced(kTreeId, kSimpleId, 3));
}
