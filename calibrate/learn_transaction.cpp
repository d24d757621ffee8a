#include "calibrate/learn_transaction.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <stdexcept>

#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "common/run_lock.hpp"
#include "common/unique_fd.hpp"
#include "common/utc_time.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/profile_toml.hpp"
#include "profiles/store.hpp"

namespace autotune::calibrate {

using search::JournalContents;
using search::JournalHeader;
using search::JournalRecord;
using search::JournalWriter;
using search::load_journal;
using search::lock_journal;
using search::parse_journal_line;
using search::record_problem;
using search::to_json_line;

namespace {

using nlohmann::json;

constexpr const char* kSteps[] = {"folded", "published", "retired"};

struct Plan {
  std::string id;
  std::vector<std::string> done;  // steps recorded done, in order
  std::filesystem::path journal;
  std::string header_line;                // the journal's header, for a journal that does not exist yet
  std::vector<std::string> record_lines;  // the production records, each carrying the id
  std::filesystem::path profile_target;
  std::string profile_toml;  // the version to publish, exactly; empty when no rule changed
  std::filesystem::path telemetry_dir;
  std::vector<std::string> files;  // names in telemetry_dir to move to learned/
};

void save_plan(const std::filesystem::path& path, const Plan& p) {
  json j = {{"id", p.id},
            {"done", p.done},
            {"journal", p.journal.string()},
            {"header", p.header_line},
            {"records", p.record_lines},
            {"profile", p.profile_target.string()},
            {"profile_toml", p.profile_toml},
            {"telemetry", p.telemetry_dir.string()},
            {"files", p.files}};
  write_file_atomically(path, j.dump(1) + "\n");
}

std::optional<Plan> load_plan(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  try {
    const json j = json::parse(read_file(path));
    Plan p;
    p.id = j.at("id").get<std::string>();
    p.done = j.at("done").get<std::vector<std::string>>();
    p.journal = j.at("journal").get<std::string>();
    p.header_line = j.at("header").get<std::string>();
    p.record_lines = j.at("records").get<std::vector<std::string>>();
    p.profile_target = j.at("profile").get<std::string>();
    p.profile_toml = j.at("profile_toml").get<std::string>();
    p.telemetry_dir = j.at("telemetry").get<std::string>();
    p.files = j.at("files").get<std::vector<std::string>>();
    return p;
  } catch (const json::exception& e) {
    throw InputError(path.string(), 0,
                     std::string("expected the plan of an interrupted learn; found something else (") +
                         e.what() + "): move it aside to start afresh");
  }
}

std::string new_id() {
  std::random_device rd;
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%s-%d-%08x", utc_timestamp_now().c_str(),
                static_cast<int>(::getpid()), rd());
  return buffer;
}

// Appends the records the journal does not hold yet (a kill may have cut the append short: the writer cuts a
// torn last line, and the whole ones that carry the id are not written twice).
void fold(const Plan& p) {
  std::error_code ec;
  const bool fresh =
      !std::filesystem::exists(p.journal, ec) || std::filesystem::file_size(p.journal, ec) == 0;
  size_t have = 0;
  if (!fresh)
    for (const auto& r : load_journal(p.journal).records) have += r.learn_id == p.id;
  std::vector<JournalRecord> missing;
  for (size_t i = have; i < p.record_lines.size(); ++i)
    if (auto e = parse_journal_line(p.record_lines[i], p.journal.string(), 0); e && e->record())
      missing.push_back(*e->record());
  JournalWriter writer(p.journal);
  if (fresh)
    if (auto h = parse_journal_line(p.header_line, p.journal.string(), 1); h && h->header())
      writer.write(*h->header());
  writer.write(missing);
}

// Done when the file and its version under versions/ both hold the text (the store's save writes the file,
// then the version: a kill between them leaves the version to write). Saved again, the file's .prev becomes
// the new text; the old one stays under versions/ by its digest, where every save put it.
void publish(const Plan& p, const std::filesystem::path& store) {
  if (p.profile_toml.empty()) return;
  std::error_code ec;
  const auto version = profiles::Store::version_path(
      p.profile_target, profiles::digest_text(profiles::profile_digest(p.profile_toml)));
  if (std::filesystem::exists(p.profile_target, ec) && read_file(p.profile_target) == p.profile_toml &&
      std::filesystem::exists(version, ec))
    return;
  profiles::Store(store).save(profiles::parse_profile(p.profile_toml, p.profile_target.string()));
}

// telemetry/learned, made if missing, opened without following a link: every job's user can write
// telemetry/, so a `learned` planted there (a link elsewhere, a folder another user controls) is refused.
int open_learned(int telemetry_fd, const std::filesystem::path& telemetry) {
  const std::string where = (telemetry / "learned").string();
  if (::mkdirat(telemetry_fd, "learned", 0755) != 0 && errno != EEXIST)
    throw std::runtime_error("cannot make " + where + ": " + std::strerror(errno));
  const int fd = ::openat(telemetry_fd, "learned", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    throw InputError(where, 0,
                     std::string("expected a folder (not a link) for the telemetry learn read; ") +
                         std::strerror(errno) + ": remove what is there");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || (st.st_uid != ::geteuid() && st.st_uid != 0) ||
      (st.st_mode & (S_IWGRP | S_IWOTH))) {
    ::close(fd);
    throw InputError(where, 0,
                     "expected a folder of this user (or root) that no one else can write; found another: "
                     "remove it");
  }
  return fd;
}

void retire(const Plan& p) {
  UniqueFd dir(::open(p.telemetry_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.get() < 0)
    throw std::runtime_error("cannot open " + p.telemetry_dir.string() + ": " + std::strerror(errno));
  UniqueFd learned(open_learned(dir.get(), p.telemetry_dir));
  for (const auto& name : p.files)
    if (::renameat(dir.get(), name.c_str(), learned.get(), name.c_str()) != 0 && errno != ENOENT)
      throw std::runtime_error("cannot move " + (p.telemetry_dir / name).string() +
                               " to learned/: " + std::strerror(errno));
  ::fsync(learned.get());
  ::fsync(dir.get());
}

// Does what the plan has not recorded done, recording each step, then removes the plan.
void complete(Plan& p, const std::filesystem::path& plan_path, const std::filesystem::path& store,
              const LearnRequest& request) {
  for (const char* step : kSteps) {
    if (std::find(p.done.begin(), p.done.end(), step) != p.done.end()) continue;
    const std::string s = step;
    if (s == "folded") fold(p);
    if (s == "published") publish(p, store);
    if (s == "retired") retire(p);
    p.done.push_back(s);
    save_plan(plan_path, p);
    if (request.after_step) request.after_step(s);
  }
  std::filesystem::remove(plan_path);
  if (request.after_step) request.after_step("done");
}

}  // namespace

std::filesystem::path learn_transaction_path(const std::filesystem::path& store) {
  return store / ".learn-transaction.json";
}

namespace {

struct Judged {
  profiles::Profile current;
  std::filesystem::path target;    // where the store keeps this cluster's profile
  std::filesystem::path journal;   // and its journal
  std::vector<std::string> files;  // the telemetry believed, by name
  LearnOutcome outcome;
};

// Reads the profile, the telemetry the trust model believes and the calibration's defaults, and judges.
Judged judge(const LearnRequest& r) {
  Judged j;
  j.current = profiles::read_profile(r.profile);
  const profiles::Store store(r.store);
  j.target = store.path_for(j.current);
  j.journal = store.journal_path_for(j.current.cluster.name, j.current.provenance.nccl_version);
  std::error_code ec;
  TelemetryRead read = read_telemetry(r.store / "telemetry", store_trust(j.current, r.profile, j.target));
  CalibrationDefaults defaults;
  if (std::filesystem::exists(j.journal, ec) && std::filesystem::file_size(j.journal, ec) > 0) {
    JournalContents calibration = load_journal(j.journal);
    j.outcome.journal_skipped = calibration.skipped;
    defaults = calibration_defaults(calibration.records);
  }
  j.outcome.result = learn(j.current, read.files, r.options, defaults);
  j.outcome.refused = std::move(read.refused);
  for (const auto& f : read.files) j.files.push_back(f.file.filename().string());
  return j;
}

// The whole plan, the revised profile validated before anything is written.
Plan make_plan(const Judged& j, const LearnRequest& r) {
  Plan p;
  p.id = new_id();
  p.journal = j.journal;
  JournalHeader h;
  h.created = utc_timestamp_now();
  h.command = r.command;
  h.source = "production";
  h.runner = "telemetry";
  h.nccl_version = j.current.provenance.nccl_version;
  h.cluster = j.current.cluster.name;
  h.fingerprint = j.current.cluster.fingerprint;
  h.strategy = "production";
  p.header_line = to_json_line(h);
  for (const auto& rec : production_records(j.outcome.result.evidence, p.id)) {
    if (auto problem = record_problem(rec))
      throw InputError(j.journal.string(), 0, "a production record would be refused: " + *problem);
    p.record_lines.push_back(to_json_line(rec));
  }
  p.profile_target = j.target;
  if (!j.outcome.result.changes.empty()) {
    profiles::Profile next = j.outcome.result.profile;
    next.provenance.created = h.created;
    next.provenance.command = r.command;
    profiles::validate_profile(next, j.target.string() + " (learn's revision)");
    p.profile_toml = profiles::format_profile(next);
  }
  p.telemetry_dir = r.store / "telemetry";
  p.files = j.files;
  return p;
}

}  // namespace

LearnOutcome run_learn(const LearnRequest& r) {
  const auto plan_path = learn_transaction_path(r.store);
  std::optional<RunLock> store_lock;
  std::string finished;
  if (r.dry_run) {
    if (auto pending = load_plan(plan_path))
      finished = "a learn interrupted after '" +
                 (pending->done.empty() ? std::string("planned") : pending->done.back()) + "' (" +
                 pending->id + ") is pending: the next learn finishes it first";
  } else {
    store_lock = RunLock::acquire(r.store / ".learn.lock", "learn in the store " + r.store.string());
    if (auto pending = load_plan(plan_path)) {
      const RunLock journal_lock =
          lock_journal(pending->journal, "learn's fold into " + pending->journal.string());
      finished = "finished the learn " + pending->id + " interrupted after '" +
                 (pending->done.empty() ? std::string("planned") : pending->done.back()) + "'";
      complete(*pending, plan_path, r.store, r);
    }
  }
  Judged j = judge(r);
  j.outcome.finished_pending = finished;
  if (r.dry_run || j.outcome.result.evidence.empty()) return std::move(j.outcome);
  const RunLock journal_lock = lock_journal(j.journal, "learn's fold into " + j.journal.string());
  Plan p = make_plan(j, r);
  {  // a planted telemetry/learned is refused before the plan is recorded
    UniqueFd dir(::open(p.telemetry_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (dir.get() >= 0) {
      const UniqueFd learned(open_learned(dir.get(), p.telemetry_dir));
    }
  }
  save_plan(plan_path, p);
  if (r.after_step) r.after_step("planned");
  complete(p, plan_path, r.store, r);
  if (!p.profile_toml.empty())
    j.outcome.published =
        p.profile_target.string() + " (digest " + profiles::file_digest_text(p.profile_target) + ")";
  return std::move(j.outcome);
}

}  // namespace autotune::calibrate
