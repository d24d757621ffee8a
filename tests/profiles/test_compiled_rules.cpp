#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>

#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "many_rules.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/profile_toml.hpp"
#include "profiles/store.hpp"
#include "support/temp_dir.hpp"

using autotune::test::TempDir;

using namespace autotune::profiles;
using namespace autotune::nccl;
using autotune::InputError;

namespace {

Profile without_rules(Profile p) {
  p.rules.clear();
  return p;
}

// Every field the plugin uses.
void check_same_rules(const std::vector<Rule>& got, const std::vector<Rule>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("rule " << i);
    CHECK(got[i].collective == want[i].collective);
    CHECK(got[i].min_bytes == want[i].min_bytes);
    CHECK(got[i].max_bytes == want[i].max_bytes);
    CHECK(got[i].algorithm == want[i].algorithm);
    CHECK(got[i].protocol == want[i].protocol);
    CHECK(got[i].channels == want[i].channels);
    CHECK(got[i].nodes == want[i].nodes);
    CHECK(got[i].ranks == want[i].ranks);
  }
}

struct Compiled {
  std::string text;
  Profile parsed;
  std::string bytes;
};

Compiled compiled(const Profile& p) {
  Compiled c;
  c.text = format_profile(p);
  c.parsed = parse_profile(c.text, "p.toml");
  c.bytes = compile_rules(c.parsed, c.text, "p.toml");
  return c;
}

template <typename T>
void poke(std::string& bytes, size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
}
template <typename T>
T peek(const std::string& bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

constexpr size_t kRecord0 = kCompiledRulesHeaderSize;

std::optional<Profile> read(const Compiled& c, const std::string& bytes) {
  std::optional<Profile> out;
  REQUIRE_NOTHROW(out = read_with_compiled_rules(c.text, bytes, "p.toml"));
  return out;
}

}  // namespace

TEST_CASE("compiled rules round-trip to the rules and head fields of parsing the TOML") {
  const Profile p = test::many_rules_profile();
  REQUIRE(p.rules.size() == 5 * 4 * 40);
  const Compiled c = compiled(p);
  CHECK(c.bytes.size() == kCompiledRulesHeaderSize + c.parsed.rules.size() * kCompiledRulesRecordSize);
  auto got = read(c, c.bytes);
  REQUIRE(got);
  check_same_rules(got->rules, c.parsed.rules);
  // The head: everything but the rules, compared through the canonical writer (which writes every field).
  CHECK(format_profile(without_rules(*got)) == format_profile(without_rules(c.parsed)));
  CHECK(got->cluster.fingerprint == "fp-1234");
  CHECK(got->env.at("NCCL_BUFFSIZE") == "4194304");
  CHECK(got->uncalibrated == UncalibratedPolicy::nearest_scale);
  // Evidence is not kept.
  for (const Rule& r : got->rules) CHECK_FALSE(r.busbw_gbps);
}

TEST_CASE("a profile without rules compiles to a header alone and reads back") {
  Profile p = test::many_rules_profile();
  p.rules.clear();
  const Compiled c = compiled(p);
  CHECK(c.bytes.size() == kCompiledRulesHeaderSize);
  auto got = read(c, c.bytes);
  REQUIRE(got);
  CHECK(got->rules.empty());
  CHECK(format_profile(*got) == c.text);
}

TEST_CASE("hand-written TOML: rules in file order, and settings after the first rule cannot be compiled") {
  const std::string rules =
      "[[rule]]\ncollective = \"allgather\"\nmin_bytes = 0\nmax_bytes = 100\nalgorithm = \"pat\"\n"
      "protocol = \"simple\"\n\n[[ rule ]]\ncollective = \"allreduce\"\nmin_bytes = 0\nmax_bytes = 10\n"
      "algorithm = \"tree\"\nprotocol = \"ll\"\nchannels = 3\nnodes = \"2-4\"\n";
  Profile no_rules = test::many_rules_profile();
  no_rules.rules.clear();
  const std::string head = format_profile(no_rules) + "\n";
  SECTION("rules last: compiled, in the file's order") {
    const std::string text = head + rules;
    Profile parsed = parse_profile(text, "h.toml");
    std::string bytes = compile_rules(parsed, text, "h.toml");
    auto got = read_with_compiled_rules(text, bytes, "h.toml");
    REQUIRE(got);
    REQUIRE(got->rules.size() == 2);
    CHECK(got->rules[0].collective == Collective::allgather);
    CHECK(got->rules[1].nodes == CountRange{2, 4});
    check_same_rules(got->rules, parsed.rules);
  }
  SECTION("[constants] after the rules: refused with the file's name") {
    const std::string text = head + rules + "[constants]\nbase_latency.ring.simple = 8.4\n";
    Profile parsed = parse_profile(text, "h.toml");
    REQUIRE(parsed.constants.size() == 1);
    CHECK_THROWS_WITH(compile_rules(parsed, text, "h.toml"),
                      Catch::StartsWith("h.toml") && Catch::Contains("before the first [[rule]]"));
  }
  SECTION("a [[rule]] line inside a multi-line string before the rules: refused, not mis-split") {
    std::string text = head + rules;
    const std::string command = "command = \"nccl-autotune tune --test\"";
    REQUIRE(text.find(command) != std::string::npos);
    text.replace(text.find(command), command.size(), "command = \"\"\"\n[[rule]]\n\"\"\"");
    Profile parsed = parse_profile(text, "h.toml");
    CHECK_THROWS_AS(compile_rules(parsed, text, "h.toml"), InputError);
  }
}

TEST_CASE("compiled rules that do not belong to the exact TOML, or are damaged, give nullopt") {
  const Profile p = test::many_rules_profile(5);
  const Compiled c = compiled(p);
  REQUIRE(read(c, c.bytes));

  SECTION("one byte of the TOML changed") {
    for (size_t at : {size_t(0), c.text.size() / 2, c.text.size() - 2}) {
      Compiled edited = c;
      edited.text[at] = edited.text[at] == 'x' ? 'y' : 'x';
      CHECK_FALSE(read(edited, c.bytes));
    }
  }
  SECTION("the TOML one byte longer") {
    Compiled edited = c;
    edited.text += "\n";
    CHECK_FALSE(read(edited, c.bytes));
  }
  SECTION("every truncation") {
    for (size_t n = 0; n < c.bytes.size(); ++n) CHECK_FALSE(read(c, c.bytes.substr(0, n)));
  }
  SECTION("one extra byte") {
    CHECK_FALSE(read(c, c.bytes + '\0'));
  }
  SECTION("wrong magic, version, byte order") {
    std::string b = c.bytes;
    b[0] = 'X';
    CHECK_FALSE(read(c, b));
    b = c.bytes;
    poke<uint32_t>(b, 8, kCompiledRulesVersion + 1);
    CHECK_FALSE(read(c, b));
    b = c.bytes;
    poke<uint32_t>(b, 12, 0x04030201);
    CHECK_FALSE(read(c, b));
  }
  SECTION("a count that does not match the length, also one that would wrap around") {
    std::string b = c.bytes;
    const uint64_t count = peek<uint64_t>(b, 40);
    poke<uint64_t>(b, 40, count + 1);
    CHECK_FALSE(read(c, b));
    poke<uint64_t>(b, 40, count - 1);
    CHECK_FALSE(read(c, b));
    // count * 56 overflows 64 bits to the true byte length: only division catches it.
    poke<uint64_t>(b, 40, count + (uint64_t(1) << 61));
    CHECK(uint64_t((count + (uint64_t(1) << 61)) * kCompiledRulesRecordSize) ==
          count * kCompiledRulesRecordSize);
    CHECK_FALSE(read(c, b));
  }
  SECTION("head_length past the end, or not at a [[rule]] line") {
    std::string b = c.bytes;
    const uint64_t head = peek<uint64_t>(b, 32);
    REQUIRE(c.text.compare(head, 8, "[[rule]]") == 0);
    for (uint64_t bad :
         {head + 1, head - 1, uint64_t(c.text.size()), uint64_t(c.text.size()) + 1, uint64_t(0)}) {
      poke<uint64_t>(b, 32, bad);
      CHECK_FALSE(read(c, b));
    }
  }
  SECTION("every header byte flipped") {
    for (size_t at = 0; at < kCompiledRulesHeaderSize; ++at)
      for (unsigned char mask : {0x01, 0x80}) {
        std::string b = c.bytes;
        b[at] = static_cast<char>(b[at] ^ mask);
        INFO("byte " << at << " mask " << int(mask));
        CHECK_FALSE(read(c, b));
      }
  }
  SECTION("a record with an out-of-range collective, algorithm or protocol") {
    for (size_t field : {16, 20, 24})
      for (int32_t bad : {-1, 7, 1000}) {
        std::string b = c.bytes;
        poke<int32_t>(b, kRecord0 + field, bad);
        if (field == 24 && bad == 7) continue;  // unreachable: protocols end at 2, covered by 1000
        CHECK_FALSE(read(c, b));
      }
  }
  SECTION("a record NCCL cannot run: broadcast with tree") {
    std::string b = c.bytes;
    REQUIRE(peek<int32_t>(b, kRecord0 + 16) == static_cast<int32_t>(Collective::broadcast));
    poke<int32_t>(b, kRecord0 + 20, static_cast<int32_t>(Algorithm::tree));
    CHECK_FALSE(read(c, b));
  }
  SECTION("min_bytes > max_bytes") {
    std::string b = c.bytes;
    poke<uint64_t>(b, kRecord0, peek<uint64_t>(b, kRecord0 + 8) + 1);
    CHECK_FALSE(read(c, b));
  }
  SECTION("channels outside 0..64") {
    for (int32_t bad : {-1, 65}) {
      std::string b = c.bytes;
      poke<int32_t>(b, kRecord0 + 28, bad);
      CHECK_FALSE(read(c, b));
    }
  }
  SECTION("count ranges: min 0, min > max, an absent range with values, unknown flags") {
    // The first record with both ranges (nodes 1, ranks 1-8); any-scale rules sort first.
    size_t at = kRecord0;
    while (at < c.bytes.size() && peek<uint32_t>(c.bytes, at + 48) != 3) at += kCompiledRulesRecordSize;
    REQUIRE(at < c.bytes.size());
    REQUIRE(peek<int32_t>(c.bytes, at + 44) == 8);
    std::string b = c.bytes;
    poke<int32_t>(b, at + 32, 0);
    CHECK_FALSE(read(c, b));
    b = c.bytes;
    poke<int32_t>(b, at + 40, 9);
    CHECK_FALSE(read(c, b));
    b = c.bytes;
    poke<uint32_t>(b, at + 48, 2);  // nodes absent, but its min and max still set
    CHECK_FALSE(read(c, b));
    b = c.bytes;
    poke<uint32_t>(b, at + 48, 7);
    CHECK_FALSE(read(c, b));
    b = c.bytes;
    poke<uint32_t>(b, at + 52, 1);
    CHECK_FALSE(read(c, b));
  }
  SECTION("two records overlapping") {
    std::string b = c.bytes;
    // The second rule (same collective and scale) made to start inside the first.
    poke<uint64_t>(b, kRecord0 + kCompiledRulesRecordSize, peek<uint64_t>(b, kRecord0 + 8));
    CHECK_FALSE(read(c, b));
  }
  SECTION("a cache with no records for a TOML that has rules") {
    std::string b = c.bytes.substr(0, kCompiledRulesHeaderSize);
    poke<uint64_t>(b, 40, 0);
    CHECK_FALSE(read(c, b));
  }
  SECTION("the same bytes still read: the checks above are what refused them") {
    CHECK(read(c, c.bytes));
  }
}

TEST_CASE("the store writes compiled rules beside the profile, lists only the profile, replaces them") {
  TempDir dir;
  Store store(dir.path());
  Profile p = test::many_rules_profile(3);
  const auto file = store.save(p);
  const auto rules = compiled_rules_path(file);
  CHECK(rules.string() == file.string() + ".rules");
  REQUIRE(std::filesystem::is_regular_file(rules));
  const std::string text = autotune::read_file(file);
  auto got = read_with_compiled_rules(text, autotune::read_file(rules), file.string());
  REQUIRE(got);
  // In the file's (canonical) order, which is not the order they were given in.
  check_same_rules(got->rules, parse_profile(text, file.string()).rules);

  auto listed = store.list();
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].file == file);

  // A second save: the old file becomes .prev, the compiled rules follow the new text.
  p.rules.pop_back();
  p.rules[0].channels = 64;
  store.save(p);
  const std::string text2 = autotune::read_file(file);
  const std::string bytes2 = autotune::read_file(rules);
  CHECK_FALSE(read_with_compiled_rules(text, bytes2, file.string()));
  auto got2 = read_with_compiled_rules(text2, bytes2, file.string());
  REQUIRE(got2);
  check_same_rules(got2->rules, parse_profile(text2, file.string()).rules);
  CHECK(store.list().size() == 1);
}

TEST_CASE("a compiled-rules file that cannot be written never fails the save") {
  TempDir dir;
  Store store(dir.path());
  Profile p = test::many_rules_profile(2);
  const auto target = store.path_for(p);
  // A directory in the way: the rename over it fails, the save does not; then it is removed as stale.
  std::filesystem::create_directories(compiled_rules_path(target));
  std::filesystem::path saved;
  REQUIRE_NOTHROW(saved = store.save(p));
  CHECK(saved == target);
  CHECK(read_profile(target).rules.size() == p.rules.size());
  CHECK_FALSE(std::filesystem::exists(compiled_rules_path(target)));
}

TEST_CASE("read_profile_for_use takes the compiled rules only when they are trusted and belong to the file") {
  TempDir dir;
  ::unsetenv("NCCL_AUTOTUNE_INSECURE");
  Store store(dir.path());
  const Profile p = test::many_rules_profile(3);
  const auto file = store.save(p);
  const auto rules = compiled_rules_path(file);
  const Profile parsed = read_profile(file);
  REQUIRE(parsed.rules.front().busbw_gbps);  // the TOML carries evidence; the compiled form does not

  // Trusted and bound to the file: the compiled path (no evidence), the same rules.
  Profile used = read_profile_for_use(file);
  check_same_rules(used.rules, parsed.rules);
  CHECK_FALSE(used.rules.front().busbw_gbps);
  CHECK(store.list().at(0).profile->rules.size() == parsed.rules.size());

  // Writable by the group: not trusted, so the TOML is parsed (evidence back).
  REQUIRE(::chmod(rules.c_str(), 0664) == 0);
  used = read_profile_for_use(file);
  check_same_rules(used.rules, parsed.rules);
  CHECK(used.rules.front().busbw_gbps);
  REQUIRE(::chmod(rules.c_str(), 0644) == 0);

  // The TOML edited afterwards: the compiled rules are stale, the edit applies.
  std::string text = autotune::read_file(file);
  const std::string from = "channels = ", to = "channels = 1";
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.insert(at + from.size(), "1");  // channels N -> 1N: a changed value, still valid for N < 7
  autotune::write_file_atomically(file, text);
  used = read_profile_for_use(file);
  CHECK(used.rules.front().busbw_gbps);
  check_same_rules(used.rules, parse_profile(text, file.string()).rules);
}

TEST_CASE("compiled rules: per-call conditions and chunk sizes survive, forged ones are refused",
          "[compiled_rules]") {
  Profile p;
  p.cluster.name = "c";
  p.provenance.created = "2026-06-01T12:00:00Z";
  p.provenance.nccl_version = "2.30.7";
  Rule a;
  a.max_bytes = 1023;
  a.algorithm = Algorithm::tree;
  a.protocol = Protocol::ll;
  a.reg_buff = true;
  a.pipe_ops = CountRange{2, 4};
  Rule b;
  b.min_bytes = 1 << 20;
  b.max_bytes = 8 << 20;
  b.chunk_bytes = 1 << 20;
  p.rules = {a, b};
  const std::string text = format_profile(p);
  const Profile parsed = parse_profile(text, "p.toml");
  const std::string bytes = compile_rules(parsed, text, "p.toml");
  auto read = read_with_compiled_rules(text, bytes, "p.toml");
  REQUIRE(read);
  REQUIRE(read->rules.size() == 2);
  CHECK(read->rules[0].reg_buff == std::optional<bool>(true));
  CHECK(read->rules[0].pipe_ops == CountRange{2, 4});
  CHECK_FALSE(read->rules[1].pipe_ops);
  CHECK_FALSE(read->rules[1].reg_buff);
  CHECK(read->rules[1].chunk_bytes == (1u << 20));

  auto poked = [&](size_t record, size_t at, auto value) {
    std::string out = bytes;
    std::memcpy(out.data() + kCompiledRulesHeaderSize + record * kCompiledRulesRecordSize + at, &value,
                sizeof value);
    return read_with_compiled_rules(text, out, "p.toml");
  };
  CHECK_FALSE(poked(0, 60, int32_t(2)));          // reg_buff neither -1, 0 nor 1
  CHECK_FALSE(poked(1, 52, int32_t(3)));          // pipe_ops values without the flag
  CHECK_FALSE(poked(0, 52, int32_t(0)));          // pipe_ops from 0
  CHECK_FALSE(poked(1, 64, uint64_t(1000)));      // a chunk off Simple's grain
  CHECK_FALSE(poked(1, 64, uint64_t(64 << 20)));  // a chunk NCCL's default buffer cannot hold
  CHECK_FALSE(poked(0, 64, uint64_t(1 << 20)));   // a chunk beside call conditions
  CHECK_FALSE(poked(1, 72, uint64_t(1)));         // the padding
}

TEST_CASE(
    "compiled rules: the streaming reader (the plugin's) agrees with the in-memory one on good and forged "
    "files",
    "[compiled_rules]") {
  // 2,000 rules: records span several 64 KiB chunks and so does the TOML text.
  const Compiled c = compiled(test::many_rules_profile(100));
  REQUIRE(c.text.size() > 2 * 64 * 1024);
  REQUIRE(c.bytes.size() > 64 * 1024);
  TempDir dir;
  const auto toml = dir.path() / "p.toml";
  auto stream = [&](const std::string& text, const std::string& bytes) {
    autotune::write_file_atomically(toml, text);
    autotune::write_file_atomically(compiled_rules_path(toml), bytes);
    ::chmod(toml.c_str(), 0600);
    ::chmod(compiled_rules_path(toml).c_str(), 0600);
    const int fd = ::open(toml.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    std::optional<Profile> out;
    REQUIRE_NOTHROW(out = read_with_trusted_compiled_rules(toml.string(), fd, text.size()));
    ::close(fd);
    return out;
  };
  auto same = [&](const std::string& text, const std::string& bytes) {
    Compiled other = c;
    other.text = text;
    const auto memory = read_with_compiled_rules(text, bytes, "p.toml");
    const auto streamed = stream(text, bytes);
    CHECK(memory.has_value() == streamed.has_value());
    if (memory && streamed) CHECK(format_profile(*memory) == format_profile(*streamed));
    return streamed.has_value();
  };
  CHECK(same(c.text, c.bytes));
  std::string edited = c.text;
  edited[edited.size() - 3] = edited[edited.size() - 3] == '1' ? '2' : '1';  // in the last chunk
  CHECK_FALSE(same(edited, c.bytes));
  std::string b = c.bytes;
  poke<uint64_t>(b, 32, peek<uint64_t>(b, 32) + 1);  // head_length off by one
  CHECK_FALSE(same(c.text, b));
  b = c.bytes;
  b.resize(b.size() - kCompiledRulesRecordSize);  // a record short
  CHECK_FALSE(same(c.text, b));
  b = c.bytes;
  poke<int32_t>(b, kRecord0 + (c.parsed.rules.size() - 1) * kCompiledRulesRecordSize + 20,
                99);  // last record
  CHECK_FALSE(same(c.text, b));
  // The TOML shorter than its header says (a writer cut it off).
  CHECK_FALSE(stream(c.text.substr(0, c.text.size() - 1) + "x", c.bytes));
  {
    autotune::write_file_atomically(toml, c.text);
    const int fd = ::open(toml.c_str(), O_RDONLY | O_CLOEXEC);
    CHECK_FALSE(read_with_trusted_compiled_rules(toml.string(), fd, c.text.size() + 10));
    ::close(fd);
  }
}
