#include "calibrate/tune.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "calibrate/p2p_summary.hpp"
#include "calibrate/spread_findings.hpp"
#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "common/utc_time.hpp"
#include "search/rule_basis.hpp"

namespace autotune::calibrate {

using runners::Measurement;
using runners::MeasureRequest;
using runners::ProcessSetting;
using runners::Runner;
using runners::RunnerInfo;
using runners::Scale;
namespace {

// Identifies a request within a calibration, for replay on --resume.
using ReplayKey = std::tuple<std::string, int, int, int, uint64_t, search::CandidateKey, int, int>;
ReplayKey replay_key(const runners::ProcessSetting& s, const runners::Scale& sc,
                     const runners::MeasureRequest& r, int attempt) {
  return {s.id,          sc.nodes,
          sc.ranks,      static_cast<int>(r.operation()),
          r.bytes,       search::key_of(r.candidate),
          r.repetitions, attempt};
}

// "allreduce 1 MiB ring/simple (+14 more)": the batch about to be measured, for progress.
std::string measuring_text(const std::vector<runners::MeasureRequest>& batch) {
  if (batch.empty()) return "";
  const auto& r = batch.front();
  std::string out = std::string(nccl::name(r.operation())) + " " + human_byte_size(r.bytes) + " " +
                    runners::to_string(r.candidate);
  if (batch.size() > 1) out += " (+" + std::to_string(batch.size() - 1) + " more)";
  return out;
}

// A runner that cannot go on: the job stops, the calibration goes on with the others.
struct JobAborted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The strategy's input at one scale: the collectives measured there (a layout's kinds run only some).
search::StrategyInput strategy_input(const search::SearchSpace& space, const TuneOptions& o,
                                     const runners::Scale& scale) {
  search::StrategyInput in;
  in.collectives = space.collectives_at(scale);
  in.sizes = space.sizes;
  in.repetitions = o.repetitions;
  in.derive.min_gain = o.min_gain;
  return in;
}

// A scale's point-to-point measurements: NCCL's default at every size, one batch per operation (nothing can
// be forced, so there is nothing for a strategy to choose).
std::vector<std::vector<runners::MeasureRequest>> point_to_point_batches(const search::SearchSpace& space,
                                                                         const TuneOptions& o,
                                                                         const runners::Scale& scale) {
  std::vector<std::vector<runners::MeasureRequest>> out;
  for (auto op : space.point_to_point_at(scale)) {
    auto& batch = out.emplace_back();
    for (uint64_t bytes : space.sizes) {
      runners::MeasureRequest r;
      r.bytes = bytes;
      r.repetitions = o.repetitions;
      r.set_operation(op);
      batch.push_back(r);
    }
  }
  return out;
}

void check_resumable(const search::JournalHeader& old, const search::JournalHeader& now,
                     const std::string& file) {
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
  if (old.layout != now.layout)
    mismatch("the layout", old.layout ? old.layout->parallelism : "none",
             now.layout ? now.layout->parallelism : "none");
}

}  // namespace

bool measures_itself(const search::SearchSpace& space, const runners::ProcessSetting& setting,
                     const runners::Scale& scale) {
  if (scale.nodes > 1 || space.settings.empty() || setting == space.settings.front()) return true;
  return runners::reaches_one_node(setting);
}

std::vector<search::JournalRecord> shared_records(const std::vector<search::JournalRecord>& records,
                                                  const runners::ProcessSetting& first,
                                                  const runners::ProcessSetting& setting,
                                                  const runners::Scale& scale) {
  std::vector<search::JournalRecord> out;
  for (const auto& rec : records)
    if (rec.scale == scale && rec.setting.id == first.id && rec.measured_under.empty()) {
      out.push_back(rec);
      out.back().setting = setting;
      out.back().measured_under = first.id;
    }
  return out;
}

TunePlan plan_tune(const TuneOptions& o) {
  TunePlan plan;
  plan.space = search::build_search_space(o.space);
  plan.strategy = o.strategy;
  auto strategy = search::make_strategy(o.strategy, o.adaptive);
  // Per job at each scale: the strategy's measurements (a predicted scale's confirmations) and NCCL's
  // default at every size for each point-to-point operation.
  const auto predicted = predicted_scales(plan.space.scales, o.predict);
  std::map<runners::Scale, uint64_t> per_unit;
  for (const auto& scale : plan.space.scales) {
    const auto in = strategy_input(plan.space, o, scale);
    if (!in.collectives.empty())
      per_unit[scale] =
          predicted.count(scale) ? planned_confirmations(in) : strategy->planned_measurements(in);
    per_unit[scale] += plan.space.point_to_point_at(scale).size() * plan.space.sizes.size();
  }
  // Rough time on GPUs: the exhaustive grid's average cost per measurement, scaled to the plan.
  double grid_s = 0.0;
  uint64_t grid_n = 0;
  for (const auto& cs : plan.space.collectives)
    for (uint64_t bytes : plan.space.sizes) {
      double op_s = 10e-6 + static_cast<double>(bytes) / 100e9;
      grid_s += static_cast<double>(cs.candidates.size() + 1) * (0.05 + o.repetitions * 20 * op_s);
      grid_n += cs.candidates.size() + 1;
    }
  const double per_measurement_s = grid_n ? grid_s / static_cast<double>(grid_n) : 0.0;
  for (const auto& scale : plan.space.scales) {
    ScalePlan sp{scale, 0, 0, 0.0, predicted.count(scale) > 0};
    for (const auto& setting : plan.space.settings) sp.jobs += measures_itself(plan.space, setting, scale);
    sp.measurements = per_unit[scale] * static_cast<uint64_t>(sp.jobs);
    sp.estimated_s = per_measurement_s * static_cast<double>(sp.measurements);
    plan.measurements += sp.measurements;
    plan.estimated_s += sp.estimated_s;
    plan.scales.push_back(sp);
  }
  return plan;
}

search::JournalHeader calibration_header(const TuneOptions& o, const TunePlan& plan) {
  const search::SearchSpace& space = plan.space;
  search::JournalHeader header = o.header;
  header.version = search::kJournalVersion;
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

profiles::Profile build_profile(const search::Derivation& d, const search::JournalHeader& h) {
  profiles::Profile p;
  p.cluster.name = h.cluster;
  p.cluster.fingerprint = h.fingerprint;
  p.cluster.fingerprint_facts = h.fingerprint_facts;
  p.cluster.gpu_model = h.gpu_model;
  p.cluster.gpus_per_node = h.gpus_per_node;
  p.cluster.nics_per_node = h.nics_per_node;
  p.cluster.nodes = h.nodes;
  p.provenance.created = utc_timestamp_now();
  p.provenance.tool_version = h.tool_version;
  p.provenance.nccl_version = h.nccl_version;
  p.provenance.source = profiles::parse_source(h.source).value_or(profiles::Source::measured);
  p.provenance.command = h.command;
  p.provenance.health = h.health;
  p.provenance.excluded_nodes = h.excluded_nodes;
  p.provenance.health_findings = h.health_findings;
  p.env = d.env;
  // The fabric settings every node agreed on: NCCL cannot be trusted to guess them.
  for (const auto& [name, value] : h.fabric_env) p.env.emplace(name, value);
  p.layout = h.layout;
  // The layout whose point-to-point traffic chose a setting says so (its values are in [env]).
  if (p.layout && d.p2p_setting)
    for (const auto& [name, value] : d.p2p_setting->env) p.layout->p2p_env.push_back(name);
  for (const auto& r : d.rules) p.rules.push_back(r.rule);
  return p;
}

namespace {

// One job (process-wide setting) at one scale while it is measured.
struct Unit {
  const runners::ProcessSetting& setting;
  runners::Scale scale;
  JobResult job;
  std::unique_ptr<runners::Runner> runner;
  std::string runner_text, source_text;
  std::map<std::tuple<int, uint64_t, search::CandidateKey, int>, int> attempts;  // per identical request
  std::set<std::pair<int, uint64_t>> points;
  std::optional<double> deadline;  // seconds since the calibration started
};

// The calibration: every unit in turn, each batch replayed from the journal or measured and journaled.
class Calibration {
 public:
  Calibration(const TuneOptions& o, const RunnerFactory& runners, const ProgressFn& progress)
      : o_(o),
        runners_(runners),
        progress_(progress),
        processes_(o.processes ? *o.processes : alone_),
        clock_(o.clock ? *o.clock : steady_clock()) {}

  TuneResult run();

 private:
  void open_journal();
  void run_setting(const runners::ProcessSetting& setting);
  JobResult run_unit(const runners::ProcessSetting& setting, const runners::Scale& scale, int scale_index);
  bool take_shared(Unit& u);
  bool predict(Unit& u);
  uint64_t planned_here() const;
  std::optional<std::vector<runners::Measurement>> measure(Unit& u,
                                                           const std::vector<runners::MeasureRequest>& batch);
  bool out_of_budget(const Unit& u, size_t requests) const;
  std::vector<runners::Measurement> run_requests(Unit& u,
                                                 const std::vector<runners::MeasureRequest>& requests);
  void journal(const std::vector<search::JournalRecord>& records);
  void journal(const search::JournalJobEvent& event);
  void report(const Unit& u, bool finished, const std::string& measuring = "") const;
  double elapsed() const { return clock_.seconds_since(start_); }

  const TuneOptions& o_;
  const RunnerFactory& runners_;
  const ProgressFn& progress_;
  const runners::SingleProcess alone_;
  const runners::ProcessGroup& processes_;
  const Clock& clock_;
  Clock::time_point start_;
  std::unique_ptr<search::Strategy> strategy_;
  std::map<runners::Scale, search::StrategyInput> inputs_;  // per scale
  std::set<runners::Scale> predicted_;                      // calibrate/scale_prediction.hpp
  TuneResult result_;
  std::map<ReplayKey, runners::Measurement> replay_;
  std::vector<search::JournalRecord> records_;
  std::optional<search::JournalWriter> writer_;  // root's
  double measuring_s_ = 0.0;                     // time spent in runners, for the budget's estimate
  uint64_t measured_total_ = 0;
  int units_total_ = 0, units_done_ = 0;
  bool setting_failed_ = false;
  std::string setting_detail_;
};

// What the journal already holds (--resume) becomes the replay; a fresh calibration starts a new journal,
// keeping the previous one aside.
void Calibration::open_journal() {
  bool had_header = false;
  if (o_.resume && std::filesystem::exists(o_.journal)) {
    search::JournalContents old = search::load_journal(o_.journal);
    if (o_.say)
      for (const auto& line : old.skipped) o_.say(line + ": measured again");
    if (old.header) {
      check_resumable(*old.header, result_.header, o_.journal.string());
      result_.header = *old.header;
      had_header = true;
    }
    records_ = old.records;
    for (auto& rec : old.records)
      replay_.emplace(replay_key(rec.setting, rec.scale, rec.measurement.request, rec.attempt),
                      std::move(rec.measurement));
  } else if (processes_.is_root()) {
    if (auto kept = search::keep_previous_journal(o_.journal); kept && o_.say) o_.say(kept->describe());
  }
  if (!processes_.is_root()) return;
  writer_.emplace(o_.journal);
  if (!had_header) writer_->write(result_.header);
}

// Root writes; then every process learns whether it could, so that a failed write (a full disk) stops the
// calibration on every process alike instead of on root alone, which would leave the others measuring into
// collectives root never joins.
void Calibration::journal(const std::vector<search::JournalRecord>& records) {
  std::string failure;
  if (writer_) {
    try {
      writer_->write(records);
    } catch (const search::JournalWriteError& e) {
      failure = e.what();
    }
  }
  failure = runners::broadcast_text(processes_, failure);
  if (failure.empty()) return;
  throw search::JournalWriteError(
      failure + ": the calibration stopped on every process; everything journaled before is kept in " +
      o_.journal.string() + " (free the space and continue with --resume)");
}

void Calibration::journal(const search::JournalJobEvent& event) {
  if (writer_) writer_->write(event);
}

// What this process plans to measure: the whole plan, or a concurrent group's one scale of it.
uint64_t Calibration::planned_here() const {
  if (!o_.only_scale) return result_.plan.measurements;
  for (const auto& sp : result_.plan.scales)
    if (sp.scale == *o_.only_scale) return sp.measurements;
  return 0;
}

void Calibration::report(const Unit& u, bool finished, const std::string& measuring) const {
  if (!progress_) return;
  TuneProgress p;
  p.measuring = measuring;
  p.jobs_done = units_done_ + (finished ? 1 : 0);
  p.jobs_total = units_total_;
  p.job = u.setting.id + " at " + runners::describe_shape(u.scale);
  p.measurements_done = result_.measured + result_.replayed + u.job.measured + u.job.replayed;
  p.measurements_planned = std::max<uint64_t>(planned_here(), p.measurements_done);
  p.sizes_done = u.points.size();
  p.elapsed_s = elapsed();
  if (measured_total_ > 0 && p.measurements_planned > p.measurements_done)
    p.remaining_s = measuring_s_ / static_cast<double>(measured_total_) *
                    static_cast<double>(p.measurements_planned - p.measurements_done);
  if (o_.budget)
    p.remaining_s = std::min(p.remaining_s < 0 ? 1e300 : p.remaining_s, o_.budget->count() - p.elapsed_s);
  p.job_finished = finished;
  progress_(p);
}

// Root's estimate decides for every process, so that all call the runner the same number of times.
bool Calibration::out_of_budget(const Unit& u, size_t requests) const {
  bool stop = false;
  if (u.deadline && measured_total_ > 0) {
    double estimate = measuring_s_ / static_cast<double>(measured_total_) * static_cast<double>(requests);
    stop = elapsed() + estimate > *u.deadline;
  }
  std::byte b{stop ? uint8_t{1} : uint8_t{0}};
  processes_.broadcast(std::span<std::byte>(&b, 1));
  return b != std::byte{0};
}

std::vector<runners::Measurement> Calibration::run_requests(
    Unit& u, const std::vector<runners::MeasureRequest>& requests) {
  try {
    if (!u.runner) {
      u.runner = runners_(u.setting, u.scale);
      RunnerInfo info = u.runner->info();
      u.runner_text = info.description;
      if (!info.source.empty()) u.source_text = info.source;
    }
    auto t0 = clock_.now();
    std::vector<runners::Measurement> got = u.runner->run(requests);
    measuring_s_ += clock_.seconds_since(t0);
    if (got.size() != requests.size())
      throw std::runtime_error("runner returned " + std::to_string(got.size()) + " measurements for " +
                               std::to_string(requests.size()) + " requests");
    return got;
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw JobAborted(e.what());
  }
}

std::optional<std::vector<runners::Measurement>> Calibration::measure(
    Unit& u, const std::vector<runners::MeasureRequest>& batch) {
  std::vector<runners::Measurement> out(batch.size());
  std::vector<size_t> to_run;
  std::vector<int> attempt_of(batch.size());
  auto attempts = [&](const runners::MeasureRequest& r) -> int& {
    return u.attempts[{static_cast<int>(r.operation()), r.bytes, search::key_of(r.candidate), r.repetitions}];
  };
  for (size_t i = 0; i < batch.size(); ++i) {
    attempt_of[i] = attempts(batch[i])++;
    auto it = replay_.find(replay_key(u.setting, u.scale, batch[i], attempt_of[i]));
    if (it != replay_.end())
      out[i] = it->second;
    else
      to_run.push_back(i);
  }
  if (!to_run.empty() && u.deadline && out_of_budget(u, to_run.size())) {
    for (const auto& r : batch) --attempts(r);  // nothing was measured: give the attempts back
    return std::nullopt;
  }
  if (!to_run.empty()) {
    std::vector<runners::MeasureRequest> requests;
    for (size_t i : to_run) {
      requests.push_back(batch[i]);
      requests.back().attempt = attempt_of[i];
    }
    report(u, false, measuring_text(requests));
    std::vector<runners::Measurement> got = run_requests(u, requests);
    std::vector<search::JournalRecord> records;
    const std::string now = utc_timestamp_now();
    for (size_t k = 0; k < to_run.size(); ++k) {
      const size_t i = to_run[k];
      got[k].request = batch[i];  // the journal keys on what was asked
      out[i] = got[k];
      records.push_back({u.setting, u.scale, attempt_of[i], got[k], u.source_text, u.runner_text, now});
      records.back().nodes_used = o_.nodes_used;
    }
    journal(records);
    records_.insert(records_.end(), records.begin(), records.end());
    measured_total_ += to_run.size();
    u.job.measured += to_run.size();
  }
  u.job.replayed += batch.size() - to_run.size();
  for (const auto& r : batch) u.points.insert({static_cast<int>(r.operation()), r.bytes});
  report(u, false);
  return out;
}

// A one-node shape this setting cannot change: the first setting's measurements of it count here too. False
// when there are none to take (that job failed there): then it is measured after all.
bool Calibration::take_shared(Unit& u) {
  const auto& first = result_.plan.space.settings.front();
  const uint64_t resumed =
      static_cast<uint64_t>(std::count_if(records_.begin(), records_.end(), [&](const auto& r) {
        return r.setting.id == u.setting.id && r.scale == u.scale;
      }));
  if (resumed > 0) {  // taken before the calibration was interrupted: the journal holds them
    u.job.replayed = resumed;
    return true;
  }
  std::vector<search::JournalRecord> taken = shared_records(records_, first, u.setting, u.scale);
  if (taken.empty()) return false;
  journal(taken);
  records_.insert(records_.end(), taken.begin(), taken.end());
  u.job.shared = taken.size();
  return true;
}

// A predicted scale: its confirmations agreed and the predicted times are journaled (true), or it is to be
// measured in full (false). On --resume, predictions journaled before are kept.
bool Calibration::predict(Unit& u) {
  for (const auto& r : records_)
    if (r.setting.id == u.setting.id && r.scale == u.scale && r.source == search::kPredictedSource) {
      u.job.prediction = "predicted before (--resume)";
      return true;
    }
  PredictionInput in{records_, u.setting, u.scale, &inputs_.at(u.scale), o_.predict.time_tolerance};
  ScalePrediction p = predict_and_confirm(in, [&](const auto& b) { return measure(u, b); });
  u.job.prediction = p.detail;
  if (o_.say && processes_.is_root())
    o_.say(u.setting.id + " at " + runners::shape_text(u.scale) + ": " + p.detail);
  if (!p.confirmed) return false;
  journal(p.predicted);
  records_.insert(records_.end(), p.predicted.begin(), p.predicted.end());
  u.job.predicted = p.predicted.size();
  return true;
}

JobResult Calibration::run_unit(const runners::ProcessSetting& setting, const runners::Scale& scale,
                                int scale_index) {
  Unit u{setting, scale, JobResult{setting, scale, 0, 0, 0, {}, false, ""},
         nullptr, "",    result_.header.source,
         {},      {},    {}};
  if (setting_failed_) {
    u.job.failed = true;
    u.job.detail = setting_detail_;
    return u.job;
  }
  if (!measures_itself(result_.plan.space, setting, scale) && take_shared(u)) {
    report(u, true);
    return std::move(u.job);
  }
  // NCCL's defaults are the baseline of every rule and of the [env] choice: their job may use all the budget
  // left (shared by its scales); the other settings share what it leaves.
  if (o_.budget) {
    const int scales = static_cast<int>(result_.plan.space.scales.size());
    const int sharing = setting.is_default() ? scales - scale_index : units_total_ - units_done_;
    u.deadline = elapsed() + std::max(0.0, o_.budget->count() - elapsed()) / std::max(1, sharing);
  }
  try {
    const search::StrategyInput& in = inputs_.at(scale);
    // A predicted scale whose confirmations agree needs no search (calibrate/scale_prediction.hpp).
    if (!in.collectives.empty() && !(predicted_.count(scale) && predict(u))) {
      search::StrategyReport sr =
          strategy_->run(in, [&](const std::vector<runners::MeasureRequest>& b) { return measure(u, b); });
      u.job.skipped = sr.skipped;
      u.job.given_up = sr.given_up;
    }
    for (const auto& batch : point_to_point_batches(result_.plan.space, o_, scale))
      if (!measure(u, batch)) {
        u.job.skipped.push_back(std::string(nccl::name(batch.front().operation())) + " at " +
                                runners::describe_shape(scale) + ": out of time (--budget)");
        break;
      }
  } catch (const JobAborted& e) {
    u.job.failed = true;
    u.job.detail = e.what();
    // A runner that cannot start fails every scale of this setting the same way.
    if (!u.runner) setting_failed_ = true, setting_detail_ = e.what();
  }
  report(u, true);
  return std::move(u.job);
}

void Calibration::run_setting(const runners::ProcessSetting& setting) {
  journal(search::JournalJobEvent{setting.id, "started", "", utc_timestamp_now()});
  setting_failed_ = false;
  std::string detail;
  const auto& scales = result_.plan.space.scales;
  for (size_t k = 0; k < scales.size(); ++k) {
    if (o_.only_scale && scales[k] != *o_.only_scale) continue;
    JobResult job = run_unit(setting, scales[k], static_cast<int>(k));
    ++units_done_;
    result_.measured += job.measured;
    result_.replayed += job.replayed;
    result_.shared += job.shared;
    if (job.failed) detail += runners::describe_shape(job.scale) + ": " + job.detail + "\n";
    result_.jobs.push_back(std::move(job));
  }
  journal(search::JournalJobEvent{setting.id, detail.empty() ? "finished" : "failed", detail,
                                  utc_timestamp_now()});
}

TuneResult Calibration::run() {
  result_.plan = plan_tune(o_);
  const search::SearchSpace& space = result_.plan.space;
  strategy_ = search::make_strategy(o_.strategy, o_.adaptive);
  for (const auto& scale : space.scales) inputs_[scale] = strategy_input(space, o_, scale);
  for (const auto& sp : result_.plan.scales)
    if (sp.predicted) predicted_.insert(sp.scale);
  result_.header = calibration_header(o_, result_.plan);
  open_journal();
  start_ = clock_.now();
  units_total_ = static_cast<int>(space.settings.size() * (o_.only_scale ? 1 : space.scales.size()));
  for (const auto& setting : space.settings) run_setting(setting);  // NCCL's defaults first
  if (records_.empty()) {
    std::string why;
    for (const auto& j : result_.jobs)
      if (j.failed) why += "; " + j.setting.id + " (" + runners::describe_shape(j.scale) + "): " + j.detail;
    throw std::runtime_error("no job measured anything" + why);
  }
  // Rules come from NCCL's defaults: a worker measuring another setting alone has none of them, and the
  // orchestrator checks the merged journal instead.
  if (o_.budget && space.settings.front().is_default()) {
    std::vector<std::string> left;
    for (const auto& scale : space.scales) {
      std::vector<nccl::Collective> collectives;
      for (const auto& cs : space.collectives_at(scale)) collectives.push_back(cs.collective);
      auto here = search::undecided(records_, collectives, std::span<const runners::Scale>(&scale, 1));
      left.insert(left.end(), here.begin(), here.end());
    }
    if (!left.empty()) throw std::runtime_error(search::budget_undecided_message(left, records_.size()));
  }
  conclude(result_, records_, search::DeriveOptions{o_.min_gain});
  return std::move(result_);
}

}  // namespace

TuneResult tune(const TuneOptions& o, const RunnerFactory& runners, const ProgressFn& progress) {
  return Calibration(o, runners, progress).run();
}

TuneResult tune_from_journal(const std::filesystem::path& journal, const search::DeriveOptions& options) {
  TuneResult result;
  search::JournalContents all = search::load_journal(journal);
  if (!all.header) throw InputError(journal.string(), 1, "expected a journal header line first, found none");
  result.header = *all.header;
  result.journal_skipped = all.skipped;
  result.plan.strategy = all.header->strategy;
  result.replayed = all.records.size();
  conclude(result, all.records, options);
  return result;
}

void conclude(TuneResult& result, std::span<const search::JournalRecord> records,
              const search::DeriveOptions& options) {
  result.derivation = search::derive(records, options);
  result.profile = build_profile(result.derivation, result.header);
  result.point_to_point = summarize_point_to_point(records, result.header.layout);
  result.slow_groups = slow_groups(records, result.header);
}

}  // namespace autotune::calibrate
