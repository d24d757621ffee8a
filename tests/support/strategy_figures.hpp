#pragma once
// Figures of how far a simulated calibration can be trusted, for tests and bench_strategy alike:
//  - seed agreement: the same simulated truth under five noise seeds; of the grid points (shape, collective,
//    size) any seed's profile rules on, the share whose decision (a rule's choice, or NCCL's own) at least
//    four seeds share;
//  - the truth check: the points where the simulated truth has a real gain (the best candidate of the
//    search space beats NCCL's default by twice the threshold, SimModel's truth), how many of them a
//    profile rules on with a choice that really gains more than the threshold there, and how many points
//    it rules on where its choice really loses;
//  - edge agreement: each range edge of one profile against the edge of the other's rule with the same
//    choice, within one grid step (a factor of 2) or not.
// Calibrations run in process through calibrate::set_up_calibration, as `nccl-autotune tune --simulate` does.
// Header-only; not thread-safe (each call writes its own store directory).

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "calibrate/calibration_setup.hpp"
#include "simulator/sim_cluster.hpp"
#include "simulator/sim_model.hpp"
#include "topology/examples.hpp"

namespace autotune::testing {

struct SimulatedCalibration {
  calibrate::TuneResult result;
  search::SearchSpace space;  // what was searched: the truth check's candidates
  std::string example;
  int nodes = 1;
  uint64_t samples = 0;      // timed repetitions over every measurement
  double timed_s = 0.0;      // their sum: what measuring them took, as the runner timed one operation each
  int most_repetitions = 0;  // the most repetitions any one measurement asked for
};

struct SimulatedTuneRequest {
  std::string example = "h100-8x";
  int nodes = 2;
  std::string strategy = "exhaustive";
  uint64_t seed = 1;
  double noise = 0.03;
  std::vector<int> channels;
  std::vector<runners::Scale> shapes;  // empty: tune's default shapes
};

inline SimulatedCalibration simulated_tune(const SimulatedTuneRequest& q) {
  calibrate::CalibrationRequest r;
  r.simulate = true;
  r.simulator.example = q.example;
  r.simulator.nodes = q.nodes;
  r.strategy = q.strategy;
  r.simulator.seed = q.seed;
  r.simulator.noise = q.noise;
  r.channels = q.channels;
  for (const auto& s : q.shapes) r.shapes.push_back({s, {}});
  r.command = "strategy figures";
  calibrate::CalibrationContext c;
  c.store = std::filesystem::temp_directory_path() /
            ("autotune-strategy-figures-" + std::to_string(::getpid()) + "-" + q.strategy);
  c.nccl_version_code = 22809;
  c.tool_version = "figures";
  std::filesystem::remove_all(c.store);
  calibrate::CalibrationSetup setup = calibrate::set_up_calibration(r, c);
  SimulatedCalibration out{calibrate::run_calibration(setup), search::build_search_space(setup.tune.space),
                           q.example, q.nodes};
  for (const auto& rec : search::load_journal(setup.tune.journal).records) {
    out.samples += rec.measurement.times_us.size();
    out.most_repetitions = std::max(out.most_repetitions, rec.measurement.request.repetitions);
    for (double t : rec.measurement.times_us) out.timed_s += t * 1e-6;
  }
  std::filesystem::remove_all(c.store);
  return out;
}

using Point = std::tuple<runners::Scale, nccl::Collective, uint64_t>;
using Decision = std::optional<runners::Candidate>;  // nullopt: NCCL decides

// The profile's decision at every grid point of every shape the calibration measured.
inline std::map<Point, Decision> decisions(const SimulatedCalibration& cal) {
  std::map<Point, Decision> out;
  for (const runners::Scale& scale : cal.space.scales)
    for (const auto& cs : cal.space.collectives)
      for (uint64_t b : cal.space.sizes) {
        Decision d;
        for (const auto& r : cal.result.profile.rules)
          if (r.collective == cs.collective && r.min_bytes <= b && b <= r.max_bytes &&
              r.applies_to(profiles::CommShape::of(scale.nodes, scale.ranks)))
            d = runners::Candidate{r.algorithm, r.protocol, r.channels};
        out[{scale, cs.collective, b}] = d;
      }
  return out;
}

struct SeedAgreement {
  int ruled = 0;     // points at least one seed rules on
  int agreeing = 0;  // of those, points whose most common decision at least `quorum` seeds share
  double share() const { return ruled ? static_cast<double>(agreeing) / ruled : 1.0; }
};

inline SeedAgreement seed_agreement(const std::vector<SimulatedCalibration>& seeds, int quorum) {
  std::vector<std::map<Point, Decision>> all;
  for (const auto& s : seeds) all.push_back(decisions(s));
  SeedAgreement a;
  for (const auto& [point, first] : all.front()) {
    bool any = false;
    for (const auto& d : all) any = any || d.at(point).has_value();
    if (!any) continue;
    ++a.ruled;
    int most = 0;
    for (const auto& d : all) {
      int same = 0;
      for (const auto& e : all) same += e.at(point) == d.at(point);
      most = std::max(most, same);
    }
    if (most >= quorum) ++a.agreeing;
  }
  return a;
}

struct TruthCheck {
  int real_gains = 0;  // points where the truth's best candidate beats NCCL's default by 2 x min_gain
  int found = 0;       // of those, points the profile rules on with a choice that truly gains > min_gain
  int harmful = 0;     // points the profile rules on where its choice is truly slower than NCCL's default
};

inline TruthCheck truth_check(const SimulatedCalibration& cal, double min_gain) {
  const auto topo = topology::load_example(cal.example);
  TruthCheck t;
  const auto ours = decisions(cal);
  for (const runners::Scale& scale : cal.space.scales) {
    // The truth of this shape as the simulator measures it: every group of it at once.
    sim::SimCluster cluster = sim::describe_cluster(topo, scale.nodes);
    if (scale.ranks_per_node() != cluster.node_gpus)
      cluster = sim::shape_cluster(cluster, scale.ranks_per_node(), true);
    const sim::SimModel model(cluster, cal.result.profile.env);
    auto true_gain = [&](nccl::Collective c, uint64_t b,
                         const runners::Candidate& cand) -> std::optional<double> {
      auto run = model.resolve(c, b, cand);
      if (!run || model.corrupts(run->algorithm, run->protocol)) return std::nullopt;
      const double def = model.true_time_us(c, b, model.nccl_default(c, b));
      return def / model.true_time_us(c, b, *run) - 1.0;
    };
    for (const auto& cs : cal.space.collectives)
      for (uint64_t b : cal.space.sizes) {
        double best = 0.0;
        for (const auto& cand : cs.candidates)
          if (auto g = true_gain(cs.collective, b, cand)) best = std::max(best, *g);
        const Decision& d = ours.at({scale, cs.collective, b});
        const auto g = d ? true_gain(cs.collective, b, *d) : std::nullopt;
        if (best >= 2 * min_gain) {
          ++t.real_gains;
          if (g && *g > min_gain) ++t.found;
        }
        if (d && (!g || *g < 0.0)) ++t.harmful;
      }
  }
  return t;
}

struct EdgeAgreement {
  int edges = 0;  // range edges of `of` inside the grid (not its first or last size)
  int within =
      0;  // of those, edges the other profile's rule with the same choice has within `steps` grid steps
};

// The edges of `of`'s rules against `other`'s rules with the same collective and choice that overlap them.
inline EdgeAgreement edge_agreement(const SimulatedCalibration& of, const SimulatedCalibration& other,
                                    double steps = 1.0) {
  EdgeAgreement e;
  const uint64_t first = of.space.sizes.front(), last = of.space.sizes.back();
  auto same = [](const profiles::Rule& a, const profiles::Rule& b) {
    return a.collective == b.collective && a.nodes == b.nodes && a.ranks == b.ranks &&
           a.algorithm == b.algorithm && a.protocol == b.protocol && a.channels == b.channels &&
           a.min_bytes <= b.max_bytes && b.min_bytes <= a.max_bytes;
  };
  auto close = [steps](uint64_t a, uint64_t b) {
    return std::fabs(std::log2(static_cast<double>(a)) - std::log2(static_cast<double>(b))) <= steps;
  };
  for (const auto& r : of.result.profile.rules) {
    const bool low = r.min_bytes > first, high = r.max_bytes < last;
    e.edges += low + high;
    bool low_found = false, high_found = false;
    for (const auto& o : other.result.profile.rules) {
      if (!same(r, o)) continue;
      low_found = low_found || (low && close(r.min_bytes, std::max<uint64_t>(o.min_bytes, 1)));
      high_found = high_found || (high && close(r.max_bytes, o.max_bytes));
    }
    e.within += low_found + high_found;
  }
  return e;
}

}  // namespace autotune::testing
