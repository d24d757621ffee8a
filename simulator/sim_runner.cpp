#include "simulator/sim_runner.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "runners/bandwidth.hpp"
#include "simulator/sim_random.hpp"

namespace autotune::sim {

using runners::algbw_gbps;
using runners::busbw_gbps;
using runners::Candidate;
using runners::Measurement;
using runners::MeasureRequest;
using runners::Outcome;
using runners::ProcessGroup;
using runners::RunnerInfo;

namespace {

uint64_t request_key(const MeasureRequest& r) {
  const Candidate& c = r.candidate;
  return random::hash({static_cast<uint64_t>(r.operation()), r.bytes,
                       c.algorithm ? static_cast<uint64_t>(*c.algorithm) + 1 : 0,
                       c.protocol ? static_cast<uint64_t>(*c.protocol) + 1 : 0,
                       static_cast<uint64_t>(c.channels), static_cast<uint64_t>(r.repetitions),
                       static_cast<uint64_t>(r.attempt)});
}

// The median over repetitions of one group's slowest rank, as the NCCL runner takes it.
double group_median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Across nodes the fabric is shared with other jobs: one repetition in twenty meets their traffic and runs
// up to 4 x the noise slower, a heavier tail than inside a node (nccl-tests issue 283: 248 nodes of 8x H200
// at about 350 GB/s, sometimes under 300).
double fabric_tail(uint64_t base, double noise) {
  const uint64_t h = random::hash({base, 0x7a11});
  return random::uniform(h) < 0.05 ? 1.0 + 4.0 * noise * random::uniform(random::mix(h)) : 1.0;
}

}  // namespace

SimRunner::SimRunner(SimModel model, uint64_t seed, double noise, const ProcessGroup& processes)
    : seed_(seed), noise_(std::max(0.0, noise)), processes_(processes) {
  groups_.push_back(std::move(model));
}

SimRunner::SimRunner(std::vector<SimModel> groups, uint64_t seed, double noise, const ProcessGroup& processes)
    : groups_(std::move(groups)),
      per_group_(true),
      seed_(seed),
      noise_(std::max(0.0, noise)),
      processes_(processes) {
  if (groups_.empty()) throw std::invalid_argument("SimRunner: a shape of no groups");
}

RunnerInfo SimRunner::info() const {
  const SimCluster& c = groups_.front().cluster();
  RunnerInfo i;
  i.kind = "simulator";
  i.source = "simulated";
  i.ranks = c.ranks();
  i.nodes = c.nodes;
  i.gpus_per_node = c.gpus_per_node;
  i.groups = static_cast<int>(groups_.size());
  i.gpu_model = c.gpu_model;
  i.nccl_version = "simulated";
  i.description = fmt::format(
      "SIMULATED: NCCL cost model over {} node(s) x {} {} (sm {}, {} {:.0f} GB/s{}{}, {} NIC(s) {:.0f} "
      "GB/s), "
      "noise {:.1f}%, seed {}",
      c.nodes, c.gpus_per_node, c.gpu_model, c.sm, c.nvlink ? "NVLink" : "PCIe", c.intra_gbps,
      c.nvswitch ? ", NVSwitch" : "", c.nvls ? ", NVLS" : "", c.nics.size(), c.net_gbps(), noise_ * 100.0,
      seed_);
  for (const auto& a : c.assumptions) i.description += "; ASSUMED: " + a;
  if (per_group_)
    i.description += fmt::format("; {} group(s) of {}x{} at once", i.groups, c.nodes, c.ranks());
  for (const auto& f : c.faults) i.description += "; fault " + describe_fault(f);
  return i;
}

// What each group runs for every request (nullopt where it cannot), and the measurement's outcome where it
// is not ok: a combination one group cannot run is unsupported for the shape.
std::vector<std::vector<std::optional<SimChoice>>> SimRunner::resolve_batch(
    std::span<const MeasureRequest> batch, std::vector<Measurement>& out) const {
  std::vector<std::vector<std::optional<SimChoice>>> choices(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    const MeasureRequest& r = batch[i];
    Measurement& m = out[i];
    m.request = r;
    if (r.repetitions < 1) {
      m.outcome = Outcome::failed;
      m.detail = "repetitions must be at least 1, got " + std::to_string(r.repetitions);
      continue;
    }
    if (r.point_to_point) {
      // Nothing to resolve: every group runs it (a nullopt choice each), unless something was forced.
      if (r.candidate.is_default()) {
        choices[i].assign(groups_.size(), std::nullopt);
      } else {
        m.outcome = Outcome::unsupported;
        m.detail = "nothing can be forced for " + std::string(nccl::name(*r.point_to_point)) +
                   ": NCCL's tuner never sees point-to-point operations";
      }
      continue;
    }
    std::string why;
    for (const auto& group : groups_) {
      auto choice = group.resolve(r.collective, r.bytes, r.candidate, &why);
      if (!choice) {
        m.outcome = Outcome::unsupported;
        m.detail = why;
        choices[i].clear();
        break;
      }
      choices[i].push_back(choice);
    }
  }
  return choices;
}

std::vector<Measurement> SimRunner::run(std::span<const MeasureRequest> batch) {
  const int ranks = std::max(1, groups_.front().cluster().ranks());
  const size_t groups = groups_.size();
  const int total = ranks * static_cast<int>(groups);
  std::vector<Measurement> out(batch.size());
  const auto choices = resolve_batch(batch, out);
  // Per measurement, per repetition: this process's share of max and sum over simulated ranks (and the max
  // per group); combined over processes in one collective call each for the whole batch.
  std::vector<size_t> offset(batch.size() + 1, 0);
  std::vector<uint64_t> occurrence(batch.size(), 0);
  for (size_t i = 0; i < batch.size(); ++i) {
    const bool measured = !choices[i].empty();
    if (measured) occurrence[i] = occurrences_[request_key(batch[i])]++;
    offset[i + 1] = offset[i] + (measured ? static_cast<size_t>(batch[i].repetitions) : 0);
  }
  const bool shared_fabric = groups_.front().cluster().nodes > 1;
  std::vector<double> max_us(offset.back(), 0.0), sum_us(offset.back(), 0.0);
  std::vector<double> group_us(offset.back() * groups, 0.0);
  for (size_t i = 0; i < batch.size(); ++i) {
    if (choices[i].empty()) continue;
    const MeasureRequest& r = batch[i];
    std::vector<double> truth(groups);
    for (size_t g = 0; g < groups; ++g)
      truth[g] = r.point_to_point ? groups_[g].p2p_time_us(*r.point_to_point, r.bytes)
                                  : groups_[g].true_time_us(r.collective, r.bytes, *choices[i][g]);
    const uint64_t key = request_key(r);
    for (int rep = 0; rep < r.repetitions; ++rep) {
      // One factor every rank shares (the fabric was busy) and a small positive one per rank (stragglers).
      uint64_t base = random::hash({seed_, key, occurrence[i], static_cast<uint64_t>(rep)});
      double common = std::max(0.5, 1.0 + noise_ * random::gaussian(base));
      if (shared_fabric) common *= fabric_tail(base, noise_);
      const size_t slot = offset[i] + static_cast<size_t>(rep);
      double mx = 0.0, sum = 0.0;
      for (int rank = processes_.rank(); rank < total; rank += processes_.size()) {
        double jitter =
            1.0 +
            0.25 * noise_ * std::fabs(random::gaussian(random::hash({base, static_cast<uint64_t>(rank)})));
        const size_t g = static_cast<size_t>(rank / ranks);
        double t = truth[g] * common * jitter;
        mx = std::max(mx, t);
        sum += t;
        group_us[slot * groups + g] = std::max(group_us[slot * groups + g], t);
      }
      max_us[slot] = mx;
      sum_us[slot] = sum;
    }
  }
  processes_.allreduce_max(max_us);
  processes_.allreduce_sum(sum_us);
  // Per group too when they are reported, even for one group (check's whole-job all-to-all): each process
  // holds only its ranks' share of it.
  if (groups > 1 || per_group_) processes_.allreduce_max(group_us);
  for (size_t i = 0; i < batch.size(); ++i) {
    if (choices[i].empty()) continue;
    Measurement& m = out[i];
    for (size_t k = offset[i]; k < offset[i + 1]; ++k) {
      m.times_us.push_back(max_us[k]);
      m.mean_times_us.push_back(sum_us[k] / total);
    }
    if (per_group_)
      for (size_t g = 0; g < groups; ++g) {
        std::vector<double> v;
        for (size_t k = offset[i]; k < offset[i + 1]; ++k) v.push_back(group_us[k * groups + g]);
        m.group_times_us.push_back(group_median(std::move(v)));
      }
    describe_result(choices[i], m, ranks);
  }
  return out;
}

// Bandwidths, what NCCL used (the first group's choice) and whether a forced unsafe LL128 broke the output.
void SimRunner::describe_result(const std::vector<std::optional<SimChoice>>& choices, Measurement& m,
                                int ranks) const {
  const double median = m.median_us();
  m.algbw_gbps = algbw_gbps(m.request.bytes, median);
  m.busbw_gbps = busbw_gbps(m.request.operation(), ranks, m.request.bytes, median);
  if (m.request.point_to_point) return;  // no algorithm, protocol or channels: nothing to report or break
  const SimChoice& choice = *choices.front();
  m.used_algorithm = choice.algorithm;
  m.used_protocol = choice.protocol;
  m.used_channels = choice.channels;
  for (size_t g = 0; g < choices.size(); ++g)
    if (groups_[g].corrupts(choices[g]->algorithm, choices[g]->protocol)) {
      m.outcome = Outcome::wrong_result;
      m.detail = "LL128 forced where NCCL would not enable it (no NVLink): the output did not match";
      break;
    }
}

}  // namespace autotune::sim
