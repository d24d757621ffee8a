#include "report/report_html.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "report/chart_palette.hpp"
#include "report/svg_chart.hpp"
#include "report/table_format.hpp"
#include "runners/bandwidth.hpp"
#include "search/derive.hpp"
#include "search/gain_interval.hpp"
#include "search/group_spread.hpp"
#include "search/strategy_samples.hpp"

namespace autotune::report {

using search::candidate_of;
using search::CandidateKey;
using search::DerivedRule;
using search::JournalHeader;
using search::JournalRecord;
using search::MeasurementTable;
using search::Samples;

using nccl::Collective;
using runners::Candidate;
using runners::Measurement;
using runners::Outcome;
using runners::Scale;
namespace {

using profiles::Rule;

std::string esc(std::string_view s) {
  return xml_escape(s);
}

std::string rule_choice(const Rule& r) {
  std::string s = std::string(nccl::name(r.algorithm)) + "/" + std::string(nccl::name(r.protocol));
  if (r.channels > 0) s += "/ch" + std::to_string(r.channels);
  return s;
}

std::string range_text(const std::optional<profiles::CountRange>& r) {
  if (!r) return "any";
  if (r->min == r->max) return std::to_string(r->min);
  if (r->max == std::numeric_limits<int>::max()) return std::to_string(r->min) + "+";
  return std::to_string(r->min) + "-" + std::to_string(r->max);
}

const char* kStyle = R"(
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px 32px; color: #222; }
h1 { font-size: 24px; margin-bottom: 4px; } h2 { font-size: 19px; margin-top: 32px; border-bottom: 1px solid #ccc; }
h3 { font-size: 16px; margin: 20px 0 6px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f3f3f3; }
.banner { padding: 10px 14px; border-radius: 4px; font-weight: bold; margin: 12px 0; }
.banner.simulated { background: #fff3cd; border: 2px solid #e0a800; }
.banner.imported { background: #e8f1fb; border: 2px solid #4a90d9; }
.banner.measured { background: #e7f6e7; border: 2px solid #3c9a3c; }
.note { color: #555; font-size: 13px; }
pre { background: #f7f7f7; padding: 8px; font-size: 12px; overflow-x: auto; }
details.unsupported summary { cursor: pointer; color: #555; font-size: 13px; }
.charts { display: block; }
.chart-block { break-inside: avoid; page-break-inside: avoid; margin-bottom: 12px; }
svg.chart { max-width: 100%; height: auto; background: #fff; }
@media print { body { margin: 8mm; } h2 { break-after: avoid; } }
)";

struct ChartKey {
  Scale scale;
  Collective collective;
  auto operator<=>(const ChartKey&) const = default;
};

// The rules that apply at one scale to one collective, as ranges with a label.
struct ShownRule {
  Rule rule;
  std::optional<double> gain;  // time ratio - 1
  int measured_sizes = 0;
};

std::string candidate_label(const Candidate& c) {
  return c.is_default() ? "NCCL default" : to_string(c);
}

// The candidates of a chart that have a measured time to draw.
std::set<CandidateKey> drawn_candidates(const ChartKey& key, const MeasurementTable& table) {
  std::set<CandidateKey> keys;
  for (uint64_t b : table.sizes(key.collective))
    if (auto* at = table.at(key.collective, b))
      for (const auto& [k, s] : *at)
        if (s.ok()) keys.insert(k);
  return keys;
}

// One colour per candidate for the whole page, so that a candidate looks the same in every chart and no two
// lines of a chart share a colour (NCCL's default is the black dashed line).
std::map<CandidateKey, std::string> candidate_colors(const std::map<ChartKey, MeasurementTable>& tables) {
  std::set<CandidateKey> all;
  for (const auto& [key, table] : tables)
    for (const CandidateKey& k : drawn_candidates(key, table))
      if (!candidate_of(k).is_default()) all.insert(k);
  const std::vector<std::string> colors = distinct_colors(all.size());
  std::map<CandidateKey, std::string> out;
  size_t i = 0;
  for (const CandidateKey& k : all) out[k] = colors[i++];
  return out;
}

void charts(std::string& o, const ChartKey& key, const MeasurementTable& table,
            const std::vector<ShownRule>& rules, const std::map<CandidateKey, std::string>& colors) {
  auto sizes = table.sizes(key.collective);
  const std::set<CandidateKey> keys = drawn_candidates(key, table);
  SvgChart bw, speed;
  bw.title = fmt::format("{}: bus bandwidth, {}", nccl::nccl_name(key.collective),
                         runners::describe_shape(key.scale));
  bw.x_label = "message size (bytes, log scale)";
  bw.y_label = "bus bandwidth (GB/s, log scale)";
  bw.log_y = true;  // below 1 MiB, where most rules are, a linear axis flattens every line to zero
  speed.title = fmt::format("{}: speedup over NCCL's default, {}", nccl::nccl_name(key.collective),
                            runners::describe_shape(key.scale));
  speed.x_label = bw.x_label;
  speed.y_label = "speedup (default time / candidate time)";
  speed.reference_y = 1.0;
  bw.x_tick_label = speed.x_tick_label = [](double x) { return human_size(static_cast<uint64_t>(x)); };
  for (const auto& sr : rules) {
    SvgBand band{static_cast<double>(sr.rule.min_bytes), static_cast<double>(sr.rule.max_bytes),
                 rule_choice(sr.rule)};
    bw.bands.push_back(band);
    speed.bands.push_back(band);
  }
  for (const CandidateKey& k : keys) {
    Candidate c = candidate_of(k);
    SvgSeries s{candidate_label(c), c.is_default() ? "#000000" : colors.at(k), c.is_default(), {}};
    SvgSeries sp = s;
    for (uint64_t b : sizes) {
      const Samples* smp = table.find(key.collective, b, c);
      if (!smp || !smp->ok()) continue;
      double t = smp->median();
      s.points.emplace_back(static_cast<double>(b),
                            runners::busbw_gbps(key.collective, key.scale.ranks, b, t));
      const Samples* def = table.find(key.collective, b, Candidate{});
      if (def && def->ok() && t > 0) sp.points.emplace_back(static_cast<double>(b), def->median() / t);
    }
    if (!s.points.empty()) bw.series.push_back(s);
    if (!c.is_default() && !sp.points.empty()) speed.series.push_back(sp);
  }
  o += "<div class=\"chart-block\">\n" + render_svg(bw) + "</div>\n";
  if (!speed.series.empty())
    o += "<div class=\"chart-block\">\n" + render_svg(speed) + "</div>\n";
  else
    o += "<p class=\"note\">No speedup chart: NCCL's default was not measured here.</p>\n";
}

// Point-to-point times per process-wide setting, per size: NCCL's default under each setting job.
using SettingSeries = std::map<std::string, std::map<uint64_t, std::vector<double>>>;

// One chart per point-to-point operation of a shape: no candidate exists (no per-call rule), so the lines are
// the process-wide settings, NCCL's defaults thick and dashed.
void p2p_chart(std::string& o, const Scale& scale, nccl::Operation op, const SettingSeries& by_setting) {
  SvgChart bw;
  bw.title = fmt::format("{}: bus bandwidth per process-wide setting, {}", nccl::name(op),
                         runners::describe_shape(scale));
  bw.x_label = "message size (bytes, log scale)";
  bw.y_label = "bus bandwidth (GB/s, log scale)";
  bw.log_y = true;
  bw.x_tick_label = [](double x) { return human_size(static_cast<uint64_t>(x)); };
  const std::vector<std::string> colors = distinct_colors(by_setting.size());
  size_t next_color = 0;
  for (const auto& [setting, sizes] : by_setting) {
    const bool is_default = setting == "default";
    SvgSeries s{setting, is_default ? "#000000" : colors[next_color++], is_default, {}};
    for (const auto& [bytes, times] : sizes) {
      const double median = search::median_of(times);
      if (median > 0)
        s.points.emplace_back(static_cast<double>(bytes),
                              runners::busbw_gbps(op, scale.ranks, bytes, median));
    }
    if (!s.points.empty()) bw.series.push_back(std::move(s));
  }
  o += "<h3>" + esc(std::string(nccl::name(op))) + ", " + esc(runners::describe_shape(scale)) + "</h3>\n";
  o += "<p class=\"note\">" + esc(profiles::no_rule_note(op)) +
       ": NCCL's own choice under each process-wide setting measured (the profile's [env] keeps a "
       "point-to-point setting only where it won and slowed no collective).</p>\n";
  o += "<div class=\"chart-block\">\n" + render_svg(bw) + "</div>\n";
}

std::string sizes_text(const std::set<uint64_t>& sizes) {
  if (sizes.size() > 4)
    return fmt::format("{} sizes, {}", sizes.size(), human_size_range(*sizes.begin(), *sizes.rbegin()));
  std::string out;
  for (uint64_t b : sizes) out += (out.empty() ? "" : ", ") + human_size(b);
  return out;
}

// Candidates that ran and went wrong (wrong results, time-outs, errors), straight from the records of every
// setting. "Unsupported" is not among them: NCCL declining a choice it cannot make here is no failure.
void failed_section(std::string& o, const std::vector<JournalRecord>& records) {
  struct FailKey {
    std::string setting;
    Scale scale;
    nccl::Operation operation;
    std::string candidate;
    Outcome outcome;
    auto operator<=>(const FailKey&) const = default;
  };
  std::map<FailKey, std::pair<std::set<uint64_t>, std::string>> failures;
  for (const auto& r : records) {
    const Measurement& m = r.measurement;
    if (m.outcome == Outcome::ok || m.outcome == Outcome::unsupported) continue;
    auto& f = failures[{r.setting.id, r.scale, m.request.operation(), candidate_label(m.request.candidate),
                        m.outcome}];
    f.first.insert(m.request.bytes);
    if (f.second.empty()) f.second = m.detail;
  }
  o += "<h2>Candidates that failed</h2>\n";
  if (failures.empty()) {
    o += "<p class=\"note\">None: every candidate NCCL could run gave correct results in time.</p>\n";
    return;
  }
  o += "<table class=\"failed\"><tr><th>setting</th><th>scale</th><th>collective</th><th>candidate</th>"
       "<th>outcome</th><th>sizes</th><th>detail</th></tr>\n";
  for (const auto& [k, v] : failures)
    o += "<tr><td>" + esc(k.setting) + "</td><td>" + esc(runners::describe_shape(k.scale)) + "</td><td>" +
         esc(std::string(nccl::name(k.operation))) + "</td><td>" + esc(k.candidate) + "</td><td>" +
         esc(std::string(name(k.outcome))) + "</td><td>" + esc(sizes_text(v.first)) + "</td><td>" +
         esc(v.second) + "</td></tr>\n";
  o += "</table>\n";
}

// Candidates NCCL could not use on this cluster (CollNet without SHARP, NVLS without NVSwitches), one row
// per collective and candidate whatever the setting and scale, folded away: they are many and expected.
void unsupported_section(std::string& o, const std::vector<JournalRecord>& records) {
  struct Unsupported {
    std::set<Scale> scales;
    std::set<std::string> settings;
    std::set<uint64_t> sizes;
    std::string detail;
  };
  std::map<std::pair<nccl::Operation, std::string>, Unsupported> rows;
  for (const auto& r : records) {
    const Measurement& m = r.measurement;
    if (m.outcome != Outcome::unsupported) continue;
    Unsupported& u = rows[{m.request.operation(), candidate_label(m.request.candidate)}];
    u.scales.insert(r.scale);
    u.settings.insert(r.setting.id);
    u.sizes.insert(m.request.bytes);
    if (u.detail.empty()) u.detail = m.detail;
  }
  if (rows.empty()) return;
  o += "<h2>Not supported here</h2>\n";
  o += fmt::format(
      "<p class=\"note\">{} candidate{} NCCL marked unusable on this cluster (such as CollNet without SHARP, "
      "or NVLS without NVSwitches): not failures, and never rules.</p>\n",
      rows.size(), rows.size() == 1 ? "" : "s");
  o += fmt::format("<details class=\"unsupported\"><summary>the {} candidate{}</summary>\n", rows.size(),
                   rows.size() == 1 ? "" : "s");
  o +=
      "<table class=\"unsupported\"><tr><th>collective</th><th>candidate</th><th>scales</th><th>settings</th>"
      "<th>sizes</th><th>NCCL's reason</th></tr>\n";
  for (const auto& [key, u] : rows) {
    std::string scales, settings;
    for (const Scale& sc : u.scales) scales += (scales.empty() ? "" : "; ") + runners::describe_shape(sc);
    for (const auto& st : u.settings) settings += (settings.empty() ? "" : ", ") + st;
    o += "<tr><td>" + esc(std::string(nccl::name(key.first))) + "</td><td>" + esc(key.second) + "</td><td>" +
         esc(scales) + "</td><td>" + esc(settings) + "</td><td>" + esc(sizes_text(u.sizes)) + "</td><td>" +
         esc(u.detail) + "</td></tr>\n";
  }
  o += "</table>\n</details>\n";
}

// A shape measured side by side with others (tune --concurrent): the nodes it ran on, since its figures were
// taken while other communicators loaded the same fabric.
void side_by_side_note(std::string& o, const std::vector<JournalRecord>& records, const Scale& scale) {
  std::set<std::string> ranges;
  for (const auto& r : records)
    if (r.scale == scale && !r.nodes_used.empty() && r.measured_under.empty()) ranges.insert(r.nodes_used);
  if (ranges.empty()) return;
  std::string list;
  for (const auto& range : ranges) list += (list.empty() ? "" : ", ") + range;
  o += "<p class=\"note\">Measured side by side with other communicators, on node(s) " + esc(list) +
       " of the allocation: they shared the fabric while these figures were taken.</p>\n";
}

// A shape measured as several groups at once (a layout's): each group's bandwidth against the median
// group's, so that a straggler shows as the group below the line at 1. tune's summary and `check --journal`
// judge the same figures (calibrate/spread_findings.hpp); the report only draws them.
void group_spread_chart(std::string& o, const Scale& scale, const std::vector<search::GroupSpread>& spreads) {
  SvgSeries groups{"groups", "#1f77b4", false, {}};
  const search::GroupSpread* slowest = nullptr;
  for (const auto& g : spreads)
    if (g.shape == scale) {
      groups.points.emplace_back(g.group, g.ratio);
      if (!slowest || g.ratio < slowest->ratio) slowest = &g;
    }
  if (!slowest) return;
  SvgChart c;
  c.title = fmt::format("each group's bus bandwidth against the median group's, {}",
                        runners::describe_shape(scale));
  c.x_label = "group (in the order NCCL's split gives them)";
  c.y_label = "bandwidth / the median group's";
  c.log_x = false;
  c.reference_y = 1.0;
  c.x_tick_label = [](double x) { return fmt::format("{:.0f}", x); };
  c.series.push_back(std::move(groups));
  o += fmt::format(
      "<p class=\"note\">Measured as {} groups at once: each group over its shape's {} measurements of 1 MiB "
      "and up. The slowest: {}. <code>tune</code>'s summary and <code>nccl-autotune check --journal</code> "
      "judge these figures against check's thresholds.</p>\n",
      c.series.front().points.size(), slowest->measurements, esc(slowest->describe()));
  o += "<div class=\"chart-block\">\n" + render_svg(c) + "</div>\n";
}

// What every section of the page needs: the input, the header, and the rules derived from the records.
struct Page {
  const ReportData& data;
  const JournalHeader& h;
  std::string source, cluster, title;
  std::set<std::string> sources;
  std::optional<search::Derivation> derivation;  // the rules derived here (shaded when there is no profile)
  std::string derive_note;                       // why there is no derivation
  std::string chart_setting = "default";
  // The layout the calibration was given (the journal's, else the profile's): names the kinds a shape serves.
  const profiles::JobLayout* layout = nullptr;
  // Each group of the shapes measured as several groups at once, against its shape's median group.
  std::vector<search::GroupSpread> spreads;
};

void head_section(std::string& o, const Page& pg) {
  o += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  o += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  o += "<title>" + esc(pg.title) + "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  o += "<h1>" + esc(pg.title) + "</h1>\n";
  if (pg.source == "simulated")
    o += "<div class=\"banner simulated\">SIMULATED: every figure here comes from nccl-autotune's model of "
         "NCCL "
         "(seeded noise), not from GPUs. Use it to see how the tool works, not to tune a cluster.</div>\n";
  else if (pg.source == "standin")
    o += "<div class=\"banner simulated\">STAND-IN: measured on the stand-in NCCL of tests/standin, whose "
         "times come from nccl-autotune's model of NCCL, not from GPUs. It proves the pipeline, not a "
         "cluster.</div>\n";
  else if (pg.source == "imported")
    o +=
        "<div class=\"banner imported\">IMPORTED: measured by nccl-tests and imported from its logs.</div>\n";
  else if (pg.source == "measured")
    o += "<div class=\"banner measured\">MEASURED: real NCCL collectives on this cluster's GPUs.</div>\n";
  if (pg.sources.size() > 1) {
    std::string list;
    for (const auto& s : pg.sources) list += (list.empty() ? "" : ", ") + s;
    o += "<p class=\"note\">The journal mixes sources: " + esc(list) + ".</p>\n";
  }
}

void cluster_section(std::string& o, const Page& pg) {
  // The cluster and provenance.
  o += "<h2>Cluster</h2>\n<table class=\"cluster\">\n";
  auto row = [&](const std::string& k, const std::string& v) {
    if (!v.empty()) o += "<tr><th>" + esc(k) + "</th><td>" + esc(v) + "</td></tr>\n";
  };
  row("cluster", pg.cluster);
  row("fingerprint", !pg.h.fingerprint.empty() ? pg.h.fingerprint
                     : pg.data.profile         ? pg.data.profile->cluster.fingerprint
                                               : "");
  row("GPU", !pg.h.gpu_model.empty() ? pg.h.gpu_model
             : pg.data.profile       ? pg.data.profile->cluster.gpu_model
                                     : "");
  if (pg.h.nodes > 0) row("size", fmt::format("{} nodes x {} GPUs", pg.h.nodes, pg.h.gpus_per_node));
  row("source", pg.source);
  row("NCCL", !pg.h.nccl_version.empty() ? pg.h.nccl_version
              : pg.data.profile          ? pg.data.profile->provenance.nccl_version
                                         : "");
  row("measured by", pg.h.runner);
  row("strategy", pg.h.strategy);
  row("created", !pg.h.created.empty() ? pg.h.created
                 : pg.data.profile     ? pg.data.profile->provenance.created
                                       : "");
  row("tool version", pg.h.tool_version);
  row("command", !pg.h.command.empty() ? pg.h.command
                 : pg.data.profile     ? pg.data.profile->provenance.command
                                       : "");
  row("measurements", std::to_string(pg.data.records.size()));
  o += "</table>\n";
  if (!pg.data.probe_summary.empty())
    o += "<h3>Probe</h3>\n<pre class=\"probe\">" + esc(pg.data.probe_summary) + "</pre>\n";
}

// The layout the calibration was given: every kind of communicator, its shape, how many run at once, the
// operations it runs, and whether this journal holds measurements of its shape.
void layout_section(std::string& o, const Page& pg) {
  if (!pg.layout) return;
  o += "<h2>Job layout " + esc(pg.layout->parallelism) +
       "</h2>\n<table class=\"layout\"><tr><th>group kind</th>"
       "<th>shape</th><th>groups</th><th>operations</th><th>measured here</th></tr>\n";
  for (const auto& g : pg.layout->groups) {
    const Scale shape{g.nodes, g.ranks};
    std::string measured;
    for (auto op : g.operations) {
      const auto c = nccl::as_collective(op);
      const bool seen = c && std::any_of(pg.data.records.begin(), pg.data.records.end(), [&](const auto& r) {
                          return r.scale == shape && r.measurement.request.collective == *c;
                        });
      measured += (measured.empty() ? "" : "; ") +
                  (c ? std::string(nccl::name(op)) + (seen ? ": measured" : ": not measured")
                     : profiles::no_rule_note(op));
    }
    o += "<tr><td>" + esc(std::string(profiles::kind_title(g.kind).value_or(g.kind))) + "</td><td>" +
         esc(runners::describe_shape(shape)) + "</td><td class=\"num\">" + std::to_string(g.groups) +
         "</td><td>" + esc(profiles::operations_text(g.operations)) + "</td><td>" + esc(measured) +
         "</td></tr>\n";
  }
  o += "</table>\n";
}

// Opens a shape's section: its heading, and the rules that decide its calls (or that NCCL decides them all).
void shape_heading(std::string& o, const Scale& scale,
                   const std::vector<std::pair<ChartKey, std::vector<ShownRule>>>& shown_rules,
                   const profiles::JobLayout* layout, bool p2p_measured) {
  const std::string shape = runners::describe_shape(scale);
  const auto kinds = layout ? profiles::groups_of_shape(*layout, scale.nodes, scale.ranks)
                            : std::vector<profiles::LayoutGroup>{};
  std::string serves;
  for (const auto& g : kinds) serves += (serves.empty() ? ": " : "; ") + profiles::describe_group(g);
  o += "<section class=\"shape\" id=\"shape-" + std::to_string(scale.nodes) + "x" +
       std::to_string(scale.ranks) + "\">\n<h2>Communicator " + esc(shape) + esc(serves) + "</h2>\n";
  for (const auto& g : kinds)
    for (auto op : g.operations)
      if (nccl::is_point_to_point(op))
        o += "<p class=\"note\">" + esc(std::string(profiles::kind_title(g.kind).value_or(g.kind))) + " " +
             esc(profiles::no_rule_note(op)) +
             (p2p_measured ? "; measured: the chart below." : "; not measured by this calibration.") +
             "</p>\n";
  std::string items;
  for (const auto& [key, rules] : shown_rules)
    for (const ShownRule& sr : rules)
      items += "<li>" + esc(std::string(nccl::name(sr.rule.collective))) + " " +
               esc(human_size_range(sr.rule.min_bytes, sr.rule.max_bytes)) + ": " +
               esc(rule_choice(sr.rule)) + (sr.gain ? " (" + esc(format_gain(*sr.gain)) + ")" : "") +
               "</li>\n";
  o += items.empty() ? "<p class=\"note\">No rule for this communicator: NCCL decides every call.</p>\n"
                     : "<p class=\"note\">Rules for this communicator:</p>\n<ul class=\"shape-rules\">\n" +
                           items + "</ul>\n";
}

void charts_section(std::string& o, const Page& pg) {
  // Rules to show, per (scale, collective).
  std::vector<std::pair<Scale, ShownRule>> shown;  // scale only for derived rules
  std::set<Scale> scales;
  std::map<ChartKey, MeasurementTable> tables;
  std::map<Scale, std::map<nccl::Operation, SettingSeries>> p2p;
  for (const auto& r : pg.data.records) {
    const auto& m = r.measurement;
    if (m.request.point_to_point) {
      // A copy counted for a setting that cannot reach this shape (measured_under) would draw a twin line.
      if (m.outcome == runners::Outcome::ok && r.source != "production" && r.source != "predicted" &&
          r.measured_under.empty())
        for (double t : m.times_us)
          p2p[r.scale][m.request.operation()][r.setting.id][m.request.bytes].push_back(t);
      continue;
    }
    if (r.setting.id != pg.chart_setting) continue;
    scales.insert(r.scale);
    tables[{r.scale, m.request.collective}].add(m);
  }
  auto rules_for = [&](const ChartKey& k) {
    std::vector<ShownRule> out;
    if (pg.data.profile) {
      for (const Rule& r : pg.data.profile->rules)
        if (r.collective == k.collective &&
            r.applies_to(profiles::CommShape::of(k.scale.nodes, k.scale.ranks))) {
          out.push_back(ShownRule{r, std::nullopt, 0});
        }
    } else if (pg.derivation) {
      for (const DerivedRule& d : pg.derivation->rules)
        if (d.rule.collective == k.collective && d.scale == k.scale)
          out.push_back({d.rule, profiles::gain_of(d.rule), d.measured_sizes});
    }
    return out;
  };

  o += "<h2>Bandwidth by message size</h2>\n";
  o += "<p class=\"note\">One line per candidate (median of its repetitions); NCCL's own choice is the thick "
       "dashed "
       "black line; shaded ranges are where a rule overrides NCCL";
  o += pg.data.profile ? " (rules of the profile)."
                       : " (rules derived from these measurements with the default threshold).";
  if (pg.chart_setting != "default")
    o += " Charts show the process-wide setting <code>" + esc(pg.chart_setting) + "</code>.";
  o += "</p>\n";
  if (tables.empty() && p2p.empty()) o += "<p class=\"note\">No measurements to chart.</p>\n";
  const auto colors = candidate_colors(tables);
  // One section per communicator shape: a job's tensor, pipeline and data parallel groups each get their own
  // rules, and an operator reads them per communicator.
  std::map<Scale, std::vector<ChartKey>> by_shape;
  for (const auto& entry : tables) by_shape[entry.first.scale].push_back(entry.first);
  for (const auto& entry : p2p) by_shape[entry.first];  // a shape that runs only point-to-point
  for (const auto& [scale, keys] : by_shape) {
    std::vector<std::pair<ChartKey, std::vector<ShownRule>>> shown_rules;
    for (const ChartKey& key : keys) shown_rules.emplace_back(key, rules_for(key));
    const auto p2p_here = p2p.find(scale);
    shape_heading(o, scale, shown_rules, pg.layout, p2p_here != p2p.end());
    side_by_side_note(o, pg.data.records, scale);
    group_spread_chart(o, scale, pg.spreads);
    for (const auto& [key, rules] : shown_rules) {
      o += "<h3>" + esc(std::string(nccl::nccl_name(key.collective))) + ", " +
           esc(runners::describe_shape(key.scale)) + "</h3>\n";
      charts(o, key, tables.at(key), rules, colors);
    }
    if (p2p_here != p2p.end())
      for (const auto& [op, by_setting] : p2p_here->second) p2p_chart(o, scale, op, by_setting);
    o += "</section>\n";
  }
}

void rules_section(std::string& o, const Page& pg) {
  // Rule table.
  o += "<h2>Rules</h2>\n";
  if (!pg.data.profile && !pg.derivation)
    o += "<p class=\"note\">No rules: " + esc(pg.derive_note.empty() ? "nothing measured" : pg.derive_note) +
         "</p>\n";
  std::vector<Rule> all_rules;
  std::vector<std::string> evidence, gains;
  // The gain and its interval as tune and profile show print them (profiles::gain_of).
  auto add_rule = [&](const Rule& r) {
    all_rules.push_back(r);
    const std::string interval = format_gain_interval(r);
    gains.push_back(format_rule_gain(r) + (interval.empty() ? "" : " (" + interval + ")"));
    if (r.gain)
      evidence.push_back(fmt::format("{} measured size(s), {} / {} samples", r.gain->sizes,
                                     r.samples.value_or(0), r.gain->default_samples));
    else
      evidence.push_back(r.samples ? std::to_string(*r.samples) + " samples" : "no evidence recorded");
  };
  if (pg.data.profile)
    for (const Rule& r : pg.data.profile->rules) add_rule(r);
  else if (pg.derivation)
    for (const DerivedRule& d : pg.derivation->rules) add_rule(d.rule);
  if (!all_rules.empty()) {
    o += "<table class=\"rules\"><tr><th>collective</th><th>nodes</th><th>ranks</th><th>message sizes</th>"
         "<th>choice</th><th>busbw (GB/s)</th><th>default busbw "
         "(GB/s)</th><th>gain</th><th>evidence</th></tr>\n";
    for (size_t i = 0; i < all_rules.size(); ++i) {
      const Rule& r = all_rules[i];
      o += "<tr><td>" + esc(std::string(nccl::name(r.collective))) + "</td><td>" + range_text(r.nodes) +
           "</td><td>" + range_text(r.ranks) + "</td><td>" + esc(human_size_range(r.min_bytes, r.max_bytes)) +
           "</td><td>" + esc(rule_choice(r)) + "</td><td class=\"num\">" +
           (r.busbw_gbps ? format_gbps(*r.busbw_gbps) : "") + "</td><td class=\"num\">" +
           (r.default_busbw_gbps ? format_gbps(*r.default_busbw_gbps) : "") + "</td><td class=\"num\">" +
           esc(gains[i]) + "</td><td>" + esc(evidence[i]) + "</td></tr>\n";
    }
    o += "</table>\n";
  } else if (pg.data.profile || pg.derivation) {
    o += "<p class=\"note\">No rule: NCCL's own choice was never beaten by more than the threshold and the "
         "noise.</p>\n";
  }
  if (pg.derivation && !pg.derivation->notes.empty()) {
    o += "<ul class=\"notes\">\n";
    for (const auto& n : pg.derivation->notes) o += "<li>" + esc(n) + "</li>\n";
    o += "</ul>\n";
  }
}

void settings_section(std::string& o, const Page& pg) {
  // Process-wide settings compared.
  o += "<h2>Process-wide settings</h2>\n";
  if (pg.derivation && !pg.derivation->scores.empty()) {
    double base = 0;
    for (const auto& s : pg.derivation->scores)
      if (s.setting.is_default()) base = s.total_us;
    o += "<table class=\"settings\"><tr><th>setting</th><th>environment</th><th>total time "
         "(us)</th><th>points</th>"
         "<th>vs NCCL's defaults</th><th>kept</th></tr>\n";
    for (const auto& s : pg.derivation->scores) {
      std::string env;
      for (const auto& [k, v] : s.setting.env) env += (env.empty() ? "" : " ") + k + "=" + v;
      bool kept = s.setting.id == pg.derivation->setting.id && !pg.derivation->env.empty();
      o += "<tr><td>" + esc(s.setting.id) + "</td><td><code>" + esc(env.empty() ? "(NCCL defaults)" : env) +
           "</code></td><td class=\"num\">" + fmt::format("{:.1f}", s.total_us) + "</td><td class=\"num\">" +
           std::to_string(s.points) + "</td><td class=\"num\">" +
           (base > 0 && s.total_us > 0 ? format_ratio(base / s.total_us) : "") + "</td><td>" +
           (kept ? "yes" : "") + "</td></tr>\n";
    }
    o += "</table>\n";
  }
  if (pg.data.profile && !pg.data.profile->env.empty()) {
    o += "<p>The profile exports:</p><pre>";
    for (const auto& [k, v] : pg.data.profile->env) o += esc(k + "=" + v) + "\n";
    o += "</pre>\n";
  } else if (!pg.derivation || pg.derivation->scores.size() <= 1) {
    o += "<p class=\"note\">Only NCCL's default process-wide settings were measured.</p>\n";
  }
}

// What `learn` folded in from jobs' telemetry (records of source "production"): per range, each choice
// NCCL ran in production with its GPU times, the fastest marked. Kept apart from the calibration's charts
// and rules above, which never mix them in.
void production_section(std::string& o, const std::vector<JournalRecord>& records) {
  if (records.empty()) return;
  o += "<h2>What production taught</h2>\n";
  o += fmt::format(
      "<p class=\"note\">{} aggregate{} of jobs' collectives, measured by the plugin as NCCL's profiler "
      "([online] telemetry) and folded in by <code>nccl-autotune learn</code>: GPU time per choice NCCL ran. "
      "Where an alternative beat a rule beyond the noise, or a rule was slower than NCCL's default had been, "
      "learn published a new profile version.</p>\n",
      records.size(), records.size() == 1 ? "" : "s");
  using Key = std::tuple<Scale, Collective, uint64_t>;
  std::map<Key, std::vector<const JournalRecord*>> by_range;
  for (const auto& r : records)
    by_range[{r.scale, r.measurement.request.collective, r.measurement.request.bytes}].push_back(&r);
  o += "<table class=\"production\"><tr><th>shape</th><th>collective</th><th>size</th><th>choice run</th>"
       "<th>median us</th><th>p25-p75 us</th><th>busbw GB/s</th><th>calls</th></tr>\n";
  for (const auto& [k, rows] : by_range) {
    double best = 0.0;
    for (const JournalRecord* r : rows)
      if (best == 0.0 || r->measurement.times_us[2] < best) best = r->measurement.times_us[2];
    for (const JournalRecord* r : rows) {
      const Measurement& m = r->measurement;
      const bool fastest = rows.size() > 1 && m.times_us[2] == best;
      o += "<tr><td>" + esc(runners::describe_shape(std::get<0>(k))) + "</td><td>" +
           esc(std::string(nccl::name(std::get<1>(k)))) + "</td><td>" + esc(sizes_text({std::get<2>(k)})) +
           "</td><td>" + esc(candidate_label(m.request.candidate)) + (fastest ? " (fastest)" : "") +
           "</td><td>" + fmt::format("{:.1f}", m.times_us[2]) + "</td><td>" +
           fmt::format("{:.1f}-{:.1f}", m.times_us[1], m.times_us[3]) + "</td><td>" +
           fmt::format("{:.1f}", m.busbw_gbps) + "</td><td>" + esc(r->runner) + "</td></tr>\n";
    }
  }
  o += "</table>\n";
}

}  // namespace

std::string render_report_html(const ReportData& given) {
  // Production records (learn's) are shown in their own section; everything else is the calibration's.
  ReportData data = given;
  data.records.clear();
  std::vector<JournalRecord> production;
  for (const auto& r : given.records)
    (r.source == "production" && r.measurement.times_us.size() == 5 ? production : data.records).push_back(r);
  const JournalHeader empty_header;
  Page pg{
      data, data.header ? *data.header : empty_header, {}, {}, {}, {}, std::nullopt, {}, "default", nullptr,
      {}};
  const JournalHeader& h = pg.h;
  if (h.layout)
    pg.layout = &*h.layout;
  else if (data.profile && data.profile->layout)
    pg.layout = &*data.profile->layout;
  pg.source = h.source;
  for (const auto& r : data.records) pg.sources.insert(r.source);
  if (pg.source.empty() && pg.sources.size() == 1) pg.source = *pg.sources.begin();
  if (data.profile && pg.source.empty())
    pg.source = std::string(profiles::name(data.profile->provenance.source));
  pg.cluster = !h.cluster.empty() ? h.cluster : data.profile ? data.profile->cluster.name : "";
  pg.title = !data.title.empty() ? data.title
                                 : "nccl-autotune report" + (pg.cluster.empty() ? "" : ": " + pg.cluster);
  // Rules: the profile's, or derived here.
  if (!data.records.empty()) {
    try {
      pg.derivation = search::derive(data.records, search::DeriveOptions{});
    } catch (const InputError& e) {
      pg.derive_note = e.message();
    }
  }
  if (pg.derivation) pg.chart_setting = pg.derivation->setting.id;
  pg.spreads = search::group_spreads(data.records, {h.nodes, h.gpus_per_node});

  std::string o;
  head_section(o, pg);
  cluster_section(o, pg);
  layout_section(o, pg);
  charts_section(o, pg);
  rules_section(o, pg);
  production_section(o, production);
  failed_section(o, data.records);
  unsupported_section(o, data.records);
  settings_section(o, pg);
  o += "<p class=\"note\">Generated by nccl-autotune" +
       (h.tool_version.empty() ? "" : " " + esc(h.tool_version)) +
       ". Sizes use binary units (1 KiB = 1024 B); bandwidths are decimal GB/s as nccl-tests prints "
       "them.</p>\n";
  o += "</body>\n</html>\n";
  return o;
}

void write_report(const std::filesystem::path& path, const search::JournalContents& journal,
                  const std::optional<profiles::Profile>& profile, const std::string& probe_summary) {
  ReportData data;
  data.header = journal.header;
  data.records = journal.records;
  data.profile = profile;
  data.probe_summary = probe_summary;
  write_file_atomically(path, render_report_html(data));
}

}  // namespace autotune::report
