#include "cli/tune_plan_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "calibrate/concurrent_scales.hpp"
#include "report/table_format.hpp"

namespace autotune::cli {
namespace {

struct PlanFigures {
  calibrate::TunePlan plan;
  int nodes = 1;
  std::vector<calibrate::ConcurrentRound> rounds;
  std::string in_turn;  // why the scales cannot run side by side, when they cannot
  calibrate::ScheduleCost cost;
};

PlanFigures figures(const calibrate::CalibrationSetup& s) {
  PlanFigures f;
  f.plan = s.plan ? *s.plan : calibrate::plan_tune(s.tune);
  f.nodes = std::max(1, s.tune.header.nodes);
  for (const auto& sp : f.plan.scales) f.nodes = std::max(f.nodes, sp.scale.nodes);
  f.in_turn = calibrate::in_turn_reason(s.tune);
  f.rounds = f.in_turn.empty() ? calibrate::schedule_concurrent(f.plan.scales, f.nodes)
                               : calibrate::schedule_in_turn(f.plan.scales);
  f.cost = calibrate::schedule_cost(f.plan.scales, f.rounds, f.nodes);
  return f;
}

// The round a scale runs in (1-based; 0: none).
int round_of(const std::vector<calibrate::ConcurrentRound>& rounds, const runners::Scale& scale) {
  for (size_t r = 0; r < rounds.size(); ++r)
    for (const auto& g : rounds[r].groups)
      if (g.scale == scale) return static_cast<int>(r) + 1;
  return 0;
}

std::string seconds_text(double s) {
  char buf[64];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%.0f s (%.1f h)", s, s / 3600);
  else
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  return buf;
}

std::string hours_text(double h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, h >= 10 ? "%.0f" : "%.2f", h);
  return buf;
}

std::string scale_table(const PlanFigures& f) {
  report::TextTable t({"shape", "jobs", "measurements", "estimated time", "node-hours", "round", "how"},
                      {report::Align::left, report::Align::right, report::Align::right, report::Align::right,
                       report::Align::right, report::Align::right, report::Align::left});
  for (const auto& sp : f.plan.scales) {
    const int round = round_of(f.rounds, sp.scale);
    t.add_row({runners::shape_text(sp.scale), std::to_string(sp.jobs), std::to_string(sp.measurements),
               seconds_text(sp.estimated_s), hours_text(sp.scale.nodes * sp.estimated_s / 3600.0),
               round ? std::to_string(round) : "-", sp.predicted ? "predicted" : "measured"});
  }
  return t.render();
}

// Each round's groups and their nodes: the scales of a round share the fabric.
std::string rounds_text(const std::vector<calibrate::ConcurrentRound>& rounds) {
  std::string out;
  for (size_t r = 0; r < rounds.size(); ++r) {
    out += "  round " + std::to_string(r + 1) + " (" + seconds_text(rounds[r].estimated_s) + "):";
    for (const auto& g : rounds[r].groups) out += " " + calibrate::group_text(g) + ";";
    out.back() = '\n';
  }
  return out;
}

// "alltoall at 2x4: NCCL's default at every size (no candidates: NCCL asks no tuner for it)", per operation.
std::vector<std::string> point_to_point_plan(const search::SearchSpace& space) {
  std::vector<std::string> out;
  for (auto op : nccl::kPointToPointOperations) {
    std::string shapes;
    for (const auto& scale : space.scales) {
      const auto here = space.point_to_point_at(scale);
      if (std::find(here.begin(), here.end(), op) != here.end())
        shapes += (shapes.empty() ? "" : " ") + runners::shape_text(scale);
    }
    if (!shapes.empty())
      out.push_back(std::string(nccl::name(op)) + " at " + shapes +
                    ": NCCL's default at every size (point-to-point: no candidates, no per-call rule)");
  }
  return out;
}

}  // namespace

std::string plan_text(const calibrate::CalibrationSetup& s) {
  const PlanFigures f = figures(s);
  const auto& plan = f.plan;
  std::ostringstream out;
  out << "plan (" << plan.strategy << "), nothing measured:\n";
  out << "  jobs (process-wide settings): " << plan.space.settings.size() << "\n";
  for (const auto& setting : plan.space.settings) out << "    " << setting.id << "\n";
  out << "  sizes: " << plan.space.sizes.size() << " ("
      << report::human_size_range(plan.space.sizes.front(), plan.space.sizes.back()) << ", x2)\n";
  for (const auto& cs : plan.space.collectives)
    out << "  " << nccl::name(cs.collective) << ": " << cs.candidates.size()
        << " candidates + NCCL's default\n";
  for (const auto& line : point_to_point_plan(plan.space)) out << "  " << line << "\n";
  out << "\n" << scale_table(f);
  out << "(jobs: the settings that measure the shape; a one-node shape is measured once for the settings "
         "that only "
         "act between nodes; node-hours: the shape's nodes x its time; predicted: from the cost model fitted "
         "to the smaller scales, measuring only around the predicted crossovers and a few checks, in full if "
         "one misses; --predict off measures every scale in full)\n\n";
  out << "total: " << plan.measurements << " measurements"
      << (plan.strategy == "adaptive" ? " (estimate)" : "") << " on " << f.nodes << " node(s)\n";
  out << "  one scale after another: " << seconds_text(f.cost.sequential_s) << ", "
      << hours_text(f.cost.sequential_node_hours()) << " node-hours of the whole allocation\n";
  if (f.in_turn.empty()) {
    out << "  concurrent scales (" << f.rounds.size()
        << " round(s) on disjoint nodes): " << seconds_text(f.cost.concurrent_s) << ", "
        << hours_text(f.cost.concurrent_node_hours()) << " node-hours; saves "
        << hours_text(f.cost.sequential_node_hours() - f.cost.concurrent_node_hours()) << " node-hours\n";
    out << rounds_text(f.rounds);
  } else {
    out << "  scales in turn: " << f.in_turn << "\n";
  }
  out << "  journal: " << s.tune.journal.string() << "\n";
  if (s.mode == calibrate::CalibrationMode::orchestrator)
    out << "  jobs run: " << calibrate::describe(s.launcher) << "\n";
  for (const auto& n : s.notes) out << "note: " << n << "\n";
  return out.str();
}

nlohmann::json plan_json(const calibrate::CalibrationSetup& s) {
  using nlohmann::json;
  const PlanFigures f = figures(s);
  json j{{"strategy", f.plan.strategy},
         {"nodes", f.nodes},
         {"settings", json::array()},
         {"measurements", f.plan.measurements},
         {"estimated_s", f.plan.estimated_s},
         {"sequential", {{"seconds", f.cost.sequential_s}, {"node_hours", f.cost.sequential_node_hours()}}},
         {"concurrent", {{"seconds", f.cost.concurrent_s}, {"node_hours", f.cost.concurrent_node_hours()}}},
         {"scales", json::array()},
         {"rounds", json::array()},
         {"journal", s.tune.journal.string()},
         {"notes", s.notes}};
  for (const auto& setting : f.plan.space.settings) j["settings"].push_back(setting.id);
  for (const auto& sp : f.plan.scales)
    j["scales"].push_back({{"shape", runners::shape_text(sp.scale)},
                           {"nodes", sp.scale.nodes},
                           {"ranks", sp.scale.ranks},
                           {"jobs", sp.jobs},
                           {"measurements", sp.measurements},
                           {"estimated_s", sp.estimated_s},
                           {"node_hours", sp.scale.nodes * sp.estimated_s / 3600.0},
                           {"round", round_of(f.rounds, sp.scale)},
                           {"predicted", sp.predicted}});
  for (const auto& r : f.rounds) {
    json groups = json::array();
    for (const auto& g : r.groups)
      groups.push_back(
          {{"shape", runners::shape_text(g.scale)}, {"first_node", g.first_node}, {"nodes", g.scale.nodes}});
    j["rounds"].push_back({{"estimated_s", r.estimated_s}, {"groups", groups}});
  }
  if (!f.in_turn.empty()) j["in_turn"] = f.in_turn;  // why the rounds are one scale each
  return j;
}

}  // namespace autotune::cli
