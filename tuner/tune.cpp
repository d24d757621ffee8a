#include "tuner/tune.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "common/input_error.hpp"

namespace autotune::tuner {

using runners::Measurement;
using runners::MeasureRequest;
using runners::ProcessSetting;
using runners::Runner;
using runners::RunnerInfo;
using runners::Scale;
namespace {

using Clock = std::chrono::steady_clock;

// Identifies a request within a calibration, for replay on --resume.
using ReplayKey = std::tuple<std::string, int, int, int, uint64_t, CandidateKey, int, int>;
ReplayKey replay_key(const ProcessSetting& s, const Scale& sc, const MeasureRequest& r, int attempt) {
  return {s.id,          sc.nodes, sc.ranks, static_cast<int>(r.collective), r.bytes, key_of(r.candidate),
          r.repetitions, attempt};
}

// A runner that cannot go on: the job stops, the calibration goes on with the others.
struct JobAborted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string scale_text(const Scale& s) {
  return std::to_string(s.nodes) + (s.nodes == 1 ? " node, " : " nodes, ") + std::to_string(s.ranks) +
         " ranks";
}

StrategyInput strategy_input(const SearchSpace& space, const TuneOptions& o) {
  StrategyInput in;
  in.collectives = space.collectives;
  in.sizes = space.sizes;
  in.repetitions = o.repetitions;
  in.min_gain = o.min_gain;
  int max_ranks = 1;
  for (const auto& s : space.scales) max_ranks = std::max(max_ranks, s.ranks);
  in.granularity = 4ull * static_cast<uint64_t>(max_ranks);
  return in;
}

void check_resumable(const JournalHeader& old, const JournalHeader& now, const std::string& file) {
  auto mismatch = [&](const std::string& what, const std::string& was, const std::string& is) {
    throw InputError(file, 1,
                     "--resume: the journal was started with " + what + " " + was + ", this run asks for " +
                         is + " (start a new calibration without --resume, or ask for the same)");
  };
  if (old.strategy != now.strategy) mismatch("strategy", old.strategy, now.strategy);
  if (old.min_bytes != now.min_bytes || old.max_bytes != now.max_bytes)
    mismatch("sizes", std::to_string(old.min_bytes) + ".." + std::to_string(old.max_bytes),
             std::to_string(now.min_bytes) + ".." + std::to_string(now.max_bytes));
  if (old.collectives != now.collectives) mismatch("collectives", "a different list", "another");
  if (old.repetitions != now.repetitions)
    mismatch("repetitions", std::to_string(old.repetitions), std::to_string(now.repetitions));
  if (old.source != now.source) mismatch("source", old.source, now.source);
}

}  // namespace

TunePlan plan_tune(const TuneOptions& o) {
  TunePlan plan;
  plan.space = build_search_space(o.space);
  plan.strategy = o.strategy;
  auto strategy = make_strategy(o.strategy, o.adaptive);
  StrategyInput in = strategy_input(plan.space, o);
  uint64_t per_unit = strategy->planned_measurements(in);
  uint64_t units = plan.space.settings.size() * plan.space.scales.size();
  plan.measurements = per_unit * units;
  // Rough time on GPUs: the exhaustive grid's average cost per measurement, scaled to the plan.
  double grid_s = 0.0;
  uint64_t grid_n = 0;
  for (const auto& cs : plan.space.collectives)
    for (uint64_t bytes : plan.space.sizes) {
      double op_s = 10e-6 + static_cast<double>(bytes) / 100e9;
      grid_s += static_cast<double>(cs.candidates.size() + 1) * (0.05 + o.repetitions * 20 * op_s);
      grid_n += cs.candidates.size() + 1;
    }
  if (grid_n)
    plan.estimated_s = grid_s / static_cast<double>(grid_n) * static_cast<double>(plan.measurements);
  return plan;
}

JournalHeader calibration_header(const TuneOptions& o, const TunePlan& plan) {
  const SearchSpace& space = plan.space;
  JournalHeader header = o.header;
  header.version = kJournalVersion;
  if (header.created.empty()) header.created = utc_timestamp_now();
  header.strategy = o.strategy;
  header.collectives.clear();
  for (const auto& cs : space.collectives) header.collectives.push_back(cs.collective);
  header.min_bytes = space.sizes.front();
  header.max_bytes = space.sizes.back();
  header.channels = o.space.channels;
  header.scales = space.scales;
  header.settings = space.settings;
  header.repetitions = o.repetitions;
  return header;
}

profiles::Profile build_profile(const Derivation& d, const JournalHeader& h) {
  profiles::Profile p;
  p.cluster.name = h.cluster;
  p.cluster.fingerprint = h.fingerprint;
  p.cluster.gpu_model = h.gpu_model;
  p.cluster.gpus_per_node = h.gpus_per_node;
  p.cluster.nodes = h.nodes;
  p.provenance.created = utc_timestamp_now();
  p.provenance.tool_version = h.tool_version;
  p.provenance.nccl_version = h.nccl_version;
  p.provenance.source = profiles::parse_source(h.source).value_or(profiles::Source::measured);
  p.provenance.command = h.command;
  p.env = d.env;
  for (const auto& r : d.rules) p.rules.push_back(r.rule);
  return p;
}

TuneResult tune(const TuneOptions& o, const RunnerFactory& runners, const ProgressFn& progress) {
  TuneResult result;
  result.plan = plan_tune(o);
  const SearchSpace& space = result.plan.space;
  auto strategy = make_strategy(o.strategy, o.adaptive);
  StrategyInput input = strategy_input(space, o);

  JournalHeader header = calibration_header(o, result.plan);

  // What the journal already holds, for replay.
  std::map<ReplayKey, Measurement> replay;
  std::vector<JournalRecord> all_records;
  bool had_header = false;
  if (o.resume && std::filesystem::exists(o.journal)) {
    JournalContents old = load_journal(o.journal);
    if (old.header) {
      check_resumable(*old.header, header, o.journal.string());
      header = *old.header;
      had_header = true;
    }
    all_records = old.records;
    for (auto& rec : old.records)
      replay.emplace(replay_key(rec.setting, rec.scale, rec.measurement.request, rec.attempt),
                     std::move(rec.measurement));
  } else if (o.write_journal) {
    std::filesystem::remove(o.journal);
  }
  result.header = header;
  // Writes go through here so that processes other than the journal's writer only read.
  std::optional<JournalWriter> journal_writer;
  if (o.write_journal) journal_writer.emplace(o.journal);
  auto write_event = [&](const JournalJobEvent& e) {
    if (journal_writer) journal_writer->write(e);
  };
  if (journal_writer && !had_header) journal_writer->write(header);

  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  double measuring_s = 0.0;  // time spent in runners, for the budget's estimate
  uint64_t measured_total = 0;
  const int units_total = static_cast<int>(space.settings.size() * space.scales.size());
  const uint64_t planned_per_unit = strategy->planned_measurements(input);
  int units_done = 0;

  for (const auto& setting : space.settings) {
    write_event(JournalJobEvent{setting.id, "started", "", utc_timestamp_now()});
    bool setting_failed = false;
    std::string setting_detail;
    for (const auto& scale : space.scales) {
      JobResult job{setting, scale, 0, 0, {}, false, ""};
      if (setting_failed) {
        job.failed = true;
        job.detail = setting_detail;
        result.jobs.push_back(job);
        ++units_done;
        continue;
      }
      std::unique_ptr<Runner> runner;
      std::string runner_text, source_text = header.source;
      std::map<std::tuple<int, uint64_t, CandidateKey, int>, int> attempts;
      std::set<std::pair<int, uint64_t>> points;
      // The budget left is shared evenly by the jobs still to run.
      std::optional<double> deadline;
      if (o.budget) {
        double left = o.budget->count() - elapsed();
        deadline = elapsed() + std::max(0.0, left) / std::max(1, units_total - units_done);
      }
      auto report = [&](bool finished) {
        if (!progress) return;
        TuneProgress p;
        p.jobs_done = units_done + (finished ? 1 : 0);
        p.jobs_total = units_total;
        p.job = setting.id + " at " + scale_text(scale);
        p.measurements_done = result.measured + result.replayed + job.measured + job.replayed;
        p.measurements_planned = std::max<uint64_t>(planned_per_unit * units_total, p.measurements_done);
        p.sizes_done = points.size();
        p.elapsed_s = elapsed();
        if (measured_total > 0 && p.measurements_planned > p.measurements_done)
          p.remaining_s = measuring_s / static_cast<double>(measured_total) *
                          static_cast<double>(p.measurements_planned - p.measurements_done);
        if (o.budget)
          p.remaining_s =
              std::min(p.remaining_s < 0 ? 1e300 : p.remaining_s, o.budget->count() - p.elapsed_s);
        p.job_finished = finished;
        progress(p);
      };

      MeasureFn measure =
          [&](const std::vector<MeasureRequest>& batch) -> std::optional<std::vector<Measurement>> {
        std::vector<Measurement> out(batch.size());
        std::vector<size_t> to_run;
        std::vector<int> attempt_of(batch.size());
        for (size_t i = 0; i < batch.size(); ++i) {
          const auto& r = batch[i];
          int& n = attempts[{static_cast<int>(r.collective), r.bytes, key_of(r.candidate), r.repetitions}];
          attempt_of[i] = n++;
          auto it = replay.find(replay_key(setting, scale, r, attempt_of[i]));
          if (it != replay.end()) {
            out[i] = it->second;
          } else {
            to_run.push_back(i);
          }
        }
        if (!to_run.empty() && deadline) {
          bool stop = false;
          if (measured_total > 0) {
            double estimate =
                measuring_s / static_cast<double>(measured_total) * static_cast<double>(to_run.size());
            stop = elapsed() + estimate > *deadline;
          }
          if (o.agree) stop = o.agree(stop);
          if (stop) {
            for (size_t i = 0; i < batch.size(); ++i) {  // give the attempts back: nothing was measured
              const auto& r = batch[i];
              --attempts[{static_cast<int>(r.collective), r.bytes, key_of(r.candidate), r.repetitions}];
            }
            return std::nullopt;
          }
        }
        if (!to_run.empty()) {
          try {
            if (!runner) {
              runner = runners(setting, scale);
              RunnerInfo info = runner->info();
              runner_text = info.description;
              if (!info.source.empty()) source_text = info.source;
            }
            std::vector<MeasureRequest> requests;
            for (size_t i : to_run) requests.push_back(batch[i]);
            auto t0 = Clock::now();
            std::vector<Measurement> got = runner->run(requests);
            measuring_s += std::chrono::duration<double>(Clock::now() - t0).count();
            if (got.size() != requests.size())
              throw std::runtime_error("runner returned " + std::to_string(got.size()) +
                                       " measurements for " + std::to_string(requests.size()) + " requests");
            std::vector<JournalRecord> records;
            std::string now = utc_timestamp_now();
            for (size_t k = 0; k < to_run.size(); ++k) {
              size_t i = to_run[k];
              got[k].request = batch[i];  // the journal keys on what was asked
              out[i] = got[k];
              records.push_back({setting, scale, attempt_of[i], got[k], source_text, runner_text, now});
            }
            if (journal_writer) journal_writer->write(records);
            all_records.insert(all_records.end(), records.begin(), records.end());
            measured_total += to_run.size();
            job.measured += to_run.size();
          } catch (const InputError&) {
            throw;
          } catch (const std::exception& e) {
            throw JobAborted(e.what());
          }
        }
        job.replayed += batch.size() - to_run.size();
        for (const auto& r : batch) points.insert({static_cast<int>(r.collective), r.bytes});
        report(false);
        return out;
      };

      try {
        StrategyReport sr = strategy->run(input, measure);
        job.skipped = sr.skipped;
      } catch (const JobAborted& e) {
        job.failed = true;
        job.detail = e.what();
        // A runner that cannot start fails every scale of this setting the same way.
        if (!runner) setting_failed = true, setting_detail = e.what();
      }
      report(true);
      ++units_done;
      result.measured += job.measured;
      result.replayed += job.replayed;
      result.jobs.push_back(std::move(job));
    }
    bool any_failed = std::any_of(result.jobs.begin(), result.jobs.end(),
                                  [&](const JobResult& j) { return j.setting.id == setting.id && j.failed; });
    std::string detail;
    for (const auto& j : result.jobs)
      if (j.setting.id == setting.id && j.failed) detail += scale_text(j.scale) + ": " + j.detail + "\n";
    write_event(JournalJobEvent{setting.id, any_failed ? "failed" : "finished", detail, utc_timestamp_now()});
  }

  if (all_records.empty()) {
    std::string why;
    for (const auto& j : result.jobs)
      if (j.failed) why += "; " + j.setting.id + " (" + scale_text(j.scale) + "): " + j.detail;
    throw std::runtime_error("no job measured anything" + why);
  }
  result.derivation = derive(all_records, DeriveOptions{o.min_gain});
  result.profile = build_profile(result.derivation, result.header);
  return result;
}

TuneResult tune_from_journal(const std::filesystem::path& journal, const DeriveOptions& options) {
  TuneResult result;
  JournalContents all = load_journal(journal);
  if (!all.header) throw InputError(journal.string(), 1, "expected a journal header line first, found none");
  result.header = *all.header;
  result.plan.strategy = all.header->strategy;
  result.replayed = all.records.size();
  result.derivation = derive(all.records, options);
  result.profile = build_profile(result.derivation, result.header);
  return result;
}

}  // namespace autotune::tuner
