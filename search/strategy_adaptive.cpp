// The adaptive strategy, in phases that run in order over all collectives, so that a budget that ends early
// still leaves a usable coarse picture of everything rather than a perfect picture of one collective:
//  1. coarse: NCCL's default and every live candidate at every coarse_stride-th grid size (and the last);
//     candidates that fail are dropped, and so are those clearly beaten at a bandwidth-bound coarse size and
//     losing ground since the one before;
//  2. bisect: where the decided choice (or the algorithm and protocol NCCL's default runs) differs between
//     two coarse sizes, measure the grid size halfway with the contenders of both ends (only the winner
//     where both ends share it), recursively, down to neighbouring grid sizes; between two sizes with the
//     same choice nothing is measured but near misses; a difference that rests on a margin in doubt waits
//     for phase 3 to settle it;
//  3. repetitions: wherever the derivation's answer is still in doubt, rounds of fresh repetitions
//     (repetition_rounds.hpp, as for the exhaustive strategy);
//  4. where the rounds changed a decision so that two measured sizes now differ, 2-3 again between them,
//     the rounds for the new sizes only.
// Only grid sizes are measured, as exhaustive does: a rule's edge between two neighbouring grid sizes is
// placed by the derivation, interpolated where the margins cross (derive.hpp). A candidate that is the same
// operation as NCCL's default at a size (same algorithm and protocol as NCCL reported using, channels left to
// NCCL or forced to the count it used) is not measured again there, nor is one that a smaller size already
// showed slower than NCCL's default here (times only grow with size).

#include <algorithm>
#include <map>
#include <set>

#include "common/byte_size.hpp"
#include "search/derive.hpp"
#include "search/repetition_rounds.hpp"
#include "search/strategy.hpp"
#include "search/strategy_samples.hpp"

namespace autotune::search {

using nccl::Collective;
using runners::Candidate;
using runners::MeasureRequest;
namespace {

// Bisection and rounds of repetitions, then again where the rounds changed a decision: the first pass and at
// most two more, so that noise that keeps overturning decisions cannot keep buying measurements.
constexpr int kRefinementPasses = 2;

class AdaptiveRun {
 public:
  AdaptiveRun(const AdaptiveOptions& o, const StrategyInput& in, const MeasureFn& measure)
      : o_(o), in_(in), measure_(measure) {}

  StrategyReport run() {
    for (const auto& cs : in_.collectives)
      active_[cs.collective].assign(cs.candidates.begin(), cs.candidates.end());
    coarse_phase();
    // The rounds of repetitions may overturn a decision the bisection stood on: a coarse size that looked a
    // win on 5 repetitions and is not on 80 leaves the rule's edge to be interpolated across a whole coarse
    // interval. So bisect again where neighbouring measured sizes now decide differently, and give the new
    // sizes rounds of their own, until nothing changes (a few passes; each narrows an interval).
    SpentPoints spent;
    for (int pass = 0; pass < kRefinementPasses && !stopped_; ++pass) {
      const uint64_t before = report_.measurements;
      defer_doubts_ = pass + 1 < kRefinementPasses;
      for (const auto& cs : in_.collectives) bisect_phase(cs);
      if (pass > 0 && report_.measurements == before) break;
      if (stopped_) break;
      spend_repetitions(in_, measure_, table_, report_, spent);
      for (const auto& cs : in_.collectives)
        for (uint64_t bytes : table_.sizes(cs.collective)) spent.insert({cs.collective, bytes});
    }
    return report_;
  }

 private:
  // Measures a batch unless the budget has stopped the run; returns false when nothing was measured.
  bool batch(std::vector<MeasureRequest> requests, const std::string& what) {
    if (requests.empty()) return true;
    if (stopped_) {
      skip(what);
      return false;
    }
    auto got = measure_(requests);
    if (!got) {
      stopped_ = true;
      skip(what);
      return false;
    }
    for (const auto& m : *got) table_.add(m);
    report_.measurements += got->size();
    return true;
  }

  void skip(const std::string& what) {
    if (std::find(report_.skipped.begin(), report_.skipped.end(), what) == report_.skipped.end())
      report_.skipped.push_back(what);
  }

  // NCCL's default first (one batch), then the given candidates that are neither measured there already,
  // nor banned, nor the same operation as the default.
  void measure_at(Collective c, uint64_t bytes, const std::vector<Candidate>& candidates, int repetitions,
                  const std::string& what) {
    const Candidate none{};
    if (!table_.find(c, bytes, none) && !batch({{c, bytes, none, repetitions}}, what)) return;
    std::vector<MeasureRequest> requests;
    for (const auto& cand : candidates) {
      if (table_.find(c, bytes, cand) || table_.banned(c, cand) || table_.repeats_default(c, bytes, cand) ||
          outgrown(c, bytes, cand))
        continue;
      requests.push_back({c, bytes, cand, repetitions});
    }
    batch(std::move(requests), what);
  }

  // Median of a candidate at a size, standing in the default's for one that was skipped as the same
  // operation.
  std::optional<double> median_of(Collective c, uint64_t bytes, const Candidate& cand) const {
    if (const Samples* s = table_.find(c, bytes, cand)) {
      if (s->ok()) return s->median();
      return std::nullopt;
    }
    if (table_.repeats_default(c, bytes, cand))
      if (const Samples* s = table_.find(c, bytes, Candidate{}); s && s->ok()) return s->median();
    return std::nullopt;
  }

  // An operation takes no less time on more bytes: a candidate already slower at a smaller measured size
  // than NCCL's default here is slower than the default at every size from there to here, so it can win
  // nowhere in between, and it is not measured here. Not being measured here, it is no contender for the
  // intervals on either side of here from this end; it cannot win in the lower one, and the upper one's
  // larger end judges it on its own measurement.
  bool outgrown(Collective c, uint64_t bytes, const Candidate& cand) const {
    const Samples* def = table_.find(c, bytes, Candidate{});
    if (!def || !def->ok()) return false;
    std::optional<double> below;
    for (uint64_t smaller : table_.sizes(c)) {
      if (smaller >= bytes) break;
      if (auto med = median_of(c, smaller, cand)) below = med;
    }
    return below && *below > def->median();
  }

  std::vector<size_t> coarse_indices() const {
    std::vector<size_t> idx;
    size_t stride = static_cast<size_t>(std::max(1, o_.coarse_stride));
    for (size_t i = 0; i < in_.sizes.size(); i += stride) idx.push_back(i);
    if (idx.back() != in_.sizes.size() - 1) idx.push_back(in_.sizes.size() - 1);
    return idx;
  }

  void coarse_phase() {
    // Per candidate: its median and its ratio to the best at the previous coarse size.
    std::map<std::pair<Collective, CandidateKey>, std::pair<double, double>> previous;
    std::map<Collective, double> previous_best;
    for (size_t i : coarse_indices())
      for (const auto& cs : in_.collectives) {
        Collective c = cs.collective;
        uint64_t bytes = in_.sizes[i];
        measure_at(c, bytes, active_[c], in_.repetitions,
                   "coarse pass of " + std::string(nccl::name(c)) + " at " + human_byte_size(bytes) +
                       " and above (budget)");
        SizeDecision d = decide(table_, c, bytes, in_.derive);
        std::vector<Candidate> keep;
        for (const auto& cand : active_[c]) {
          const Samples* s = table_.find(c, bytes, cand);
          if (table_.banned(c, cand) || (s && s->failure)) continue;  // failed here: dropped
          auto med = median_of(c, bytes, cand);
          if (med && d.best_us() > 0) {
            double ratio = *med / d.best_us();
            auto key = std::make_pair(c, key_of(cand));
            auto prev = previous.find(key);
            // Only where both times have grown with size (bandwidth-bound) does the ratio show the trend: two
            // latency-bound sizes say nothing about who wins at large sizes. Beaten by drop_ratio here and
            // losing ground since the previous coarse size, the candidate moves data at a lower bandwidth
            // than the best (its latency is no longer what holds it back): more bytes widen the gap, so it
            // is not measured at the larger coarse sizes. It need not have been beaten by as much at the
            // previous size too: where it was close there, the ratio growing over coarse_stride doublings of
            // the bytes is the trend itself (on GPUs: LL's half bandwidth once messages leave the
            // latency-bound range).
            bool beaten = ratio > o_.drop_ratio && prev != previous.end() && ratio >= prev->second.second &&
                          *med > 2.0 * prev->second.first && d.best_us() > 2.0 * previous_best[c];
            previous[key] = {*med, ratio};
            if (beaten) continue;
          }
          keep.push_back(cand);
        }
        active_[c] = std::move(keep);
        if (d.best_us() > 0) previous_best[c] = d.best_us();
      }
  }

  // Two measured sizes of one collective and what the derivation decides at each: every question bisect()
  // asks of the interval between them reads these, decided once.
  struct Ends {
    uint64_t a, b;
    SizeDecision da, db;
  };
  Ends ends(Collective c, uint64_t a, uint64_t b) const {
    return {a, b, decide(table_, c, a, in_.derive), decide(table_, c, b, in_.derive)};
  }

  // Candidates worth measuring between two measured sizes: near the best at either end, plus the operation
  // NCCL's default ran at either end (the default may switch later or earlier than it should).
  std::vector<Candidate> contenders(const CollectiveSpace& cs, const Ends& e) const {
    std::vector<Candidate> out;
    auto add = [&](const Candidate& cand) {
      if (std::find(out.begin(), out.end(), cand) == out.end()) out.push_back(cand);
    };
    for (const auto& [bytes, d] : {std::pair{e.a, &e.da}, std::pair{e.b, &e.db}}) {
      if (d->best_us() <= 0) continue;
      for (const auto& cand : cs.candidates) {
        if (table_.banned(cs.collective, cand)) continue;
        auto med = median_of(cs.collective, bytes, cand);
        if (med && *med <= d->best_us() * o_.contender_ratio) add(cand);
      }
    }
    return out;
  }

  // The same decision at both sizes, and NCCL's default running the same algorithm and protocol at both
  // (as far as the runner reported it; its channel count may drift with size): where NCCL switches in
  // between, the winner's margin changes there, so a rule may end or begin there, and that is bisected too.
  static bool same_choice(const Ends& e) {
    const SizeDecision &da = e.da, &db = e.db;
    if (da.provisional != db.provisional) return false;
    if (da.provisional && !(*da.winner == *db.winner)) return false;
    if (da.choice.has_value() != db.choice.has_value()) return false;
    return !da.choice ||
           (da.choice->algorithm == db.choice->algorithm && da.choice->protocol == db.choice->protocol);
  }

  // Between two sizes with the same choice, the best candidate of either end that is no win there but whose
  // interval reaches the threshold (a near miss): its margin may pass the threshold in between (h100-8x
  // broadcast ring/LL128: +1.4% on 5 repetitions at 8 MiB, a rule at 16 MiB, under NCCL's default again at
  // 256 MiB). Only those are measured in between.
  std::vector<Candidate> near_misses(const Ends& e) const {
    std::vector<Candidate> out;
    for (const SizeDecision* d : {&e.da, &e.db})
      if (d->winner && !d->provisional && d->gain.measured() && d->gain.gain > 0 &&
          d->gain.high > in_.derive.min_gain && std::find(out.begin(), out.end(), *d->winner) == out.end())
        out.push_back(*d->winner);
    return out;
  }

  // The same fastest candidate at both ends, and NCCL's default running the same algorithm and protocol at
  // both: the ends can then differ only in whether that candidate's margin passes the threshold.
  static std::optional<Candidate> shared_winner(const Ends& e) {
    const SizeDecision &da = e.da, &db = e.db;
    if (!da.winner || !db.winner || !(*da.winner == *db.winner)) return std::nullopt;
    if (!da.choice || !db.choice || da.choice->algorithm != db.choice->algorithm ||
        da.choice->protocol != db.choice->protocol)
      return std::nullopt;
    return da.winner;
  }

  // A shared winner that is a rule at one end and not at the other, with the margin's interval holding the
  // threshold at one end at least: the difference may be noise that the repetition rounds at the ends erase
  // (a 5-repetition +3.4% against a 3% threshold that is +2.6% on 80). The rounds run before the next pass,
  // which bisects wherever the ends still differ; bisecting now would measure sizes in between for a
  // difference that may not exist.
  bool differs_only_in_doubt(const Ends& e) const {
    if (!shared_winner(e)) return false;
    auto in_doubt = [&](const SizeDecision& d) {
      return !d.gain.measured() || d.gain.straddles(in_.derive.min_gain);
    };
    return e.da.provisional != e.db.provisional && (in_doubt(e.da) || in_doubt(e.db));
  }

  // What to measure in between two sizes that decide differently. Where they share the winner (and NCCL's
  // choice), the rule's edge is where that winner's margin crosses the threshold: only it is measured in
  // between. Another contender that wins at neither end could only win in between at a peak of its own
  // margin, which bisection does not look for between sizes that agree either.
  std::vector<Candidate> to_bisect_with(const CollectiveSpace& cs, const Ends& e) const {
    if (auto w = shared_winner(e)) return {*w};
    return contenders(cs, e);
  }

  void bisect(const CollectiveSpace& cs, size_t lo, size_t hi) {
    if (hi - lo <= 1) return;
    const Ends e = ends(cs.collective, in_.sizes[lo], in_.sizes[hi]);
    if (defer_doubts_ && differs_only_in_doubt(e)) return;
    const bool same = same_choice(e);
    const std::vector<Candidate> candidates = same ? near_misses(e) : to_bisect_with(cs, e);
    if (same && candidates.empty()) return;
    size_t mid = (lo + hi) / 2;
    measure_at(cs.collective, in_.sizes[mid], candidates, in_.repetitions,
               "refinement of " + std::string(nccl::name(cs.collective)) + " between " +
                   human_byte_size(in_.sizes[lo]) + " and " + human_byte_size(in_.sizes[hi]) + " (budget)");
    if (!table_.at(cs.collective, in_.sizes[mid])) return;
    bisect(cs, lo, mid);
    bisect(cs, mid, hi);
  }

  // Between every two neighbouring grid sizes measured so far (the coarse ones on the first pass).
  void bisect_phase(const CollectiveSpace& cs) {
    std::vector<size_t> measured;
    for (size_t i = 0; i < in_.sizes.size(); ++i)
      if (table_.at(cs.collective, in_.sizes[i])) measured.push_back(i);
    for (size_t k = 0; k + 1 < measured.size(); ++k) bisect(cs, measured[k], measured[k + 1]);
  }

  const AdaptiveOptions& o_;
  const StrategyInput& in_;
  const MeasureFn& measure_;
  MeasurementTable table_;
  std::map<Collective, std::vector<Candidate>> active_;
  StrategyReport report_;
  bool stopped_ = false;
  bool defer_doubts_ = false;  // a later pass follows the rounds: differences in doubt wait for it
};

class AdaptiveStrategy : public Strategy {
 public:
  explicit AdaptiveStrategy(AdaptiveOptions o) : o_(o) {}
  std::string_view name() const override { return "adaptive"; }

  // The coarse pass with every candidate, plus about three refinement sizes per coarse interval for a third
  // of the intervals with three contenders each: a planning estimate, not a promise.
  uint64_t planned_measurements(const StrategyInput& in) const override {
    size_t stride = static_cast<size_t>(std::max(1, o_.coarse_stride));
    uint64_t coarse = (in.sizes.size() + stride - 1) / stride + ((in.sizes.size() - 1) % stride ? 1 : 0);
    uint64_t n = 0;
    for (const auto& cs : in.collectives) n += coarse * (cs.candidates.size() + 1) + (coarse / 3 + 1) * 3 * 3;
    return n;
  }

  StrategyReport run(const StrategyInput& in, const MeasureFn& measure) const override {
    if (in.sizes.empty()) return {};
    AdaptiveRun r(o_, in, measure);
    return r.run();
  }

 private:
  AdaptiveOptions o_;
};

}  // namespace

std::unique_ptr<Strategy> make_adaptive_strategy(const AdaptiveOptions& options) {
  return std::make_unique<AdaptiveStrategy>(options);
}

}  // namespace autotune::search
