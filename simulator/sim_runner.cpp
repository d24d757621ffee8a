#include "simulator/sim_runner.hpp"

#include <algorithm>
#include <cmath>

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
  return random::hash({static_cast<uint64_t>(r.collective), r.bytes,
                       c.algorithm ? static_cast<uint64_t>(*c.algorithm) + 1 : 0,
                       c.protocol ? static_cast<uint64_t>(*c.protocol) + 1 : 0,
                       static_cast<uint64_t>(c.channels), static_cast<uint64_t>(r.repetitions),
                       static_cast<uint64_t>(r.attempt)});
}

}  // namespace

SimRunner::SimRunner(SimModel model, uint64_t seed, double noise, const ProcessGroup& processes)
    : model_(std::move(model)), seed_(seed), noise_(std::max(0.0, noise)), processes_(processes) {}

RunnerInfo SimRunner::info() const {
  const SimCluster& c = model_.cluster();
  RunnerInfo i;
  i.kind = "simulator";
  i.source = "simulated";
  i.ranks = c.ranks();
  i.nodes = c.nodes;
  i.gpus_per_node = c.gpus_per_node;
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
  for (const auto& f : c.faults) i.description += "; fault " + describe_fault(f);
  return i;
}

std::vector<Measurement> SimRunner::run(std::span<const MeasureRequest> batch) {
  const int ranks = std::max(1, model_.cluster().ranks());
  std::vector<Measurement> out(batch.size());
  // Per measurement, per repetition: this process's share of max and sum over simulated ranks; combined
  // over processes in one collective call for the whole batch.
  std::vector<size_t> offset(batch.size() + 1, 0);
  std::vector<std::optional<SimChoice>> choices(batch.size());
  std::vector<uint64_t> occurrence(batch.size(), 0);
  for (size_t i = 0; i < batch.size(); ++i) {
    const MeasureRequest& r = batch[i];
    Measurement& m = out[i];
    m.request = r;
    size_t reps = 0;
    if (r.repetitions < 1) {
      m.outcome = Outcome::failed;
      m.detail = "repetitions must be at least 1, got " + std::to_string(r.repetitions);
    } else {
      std::string why;
      choices[i] = model_.resolve(r.collective, r.bytes, r.candidate, &why);
      if (!choices[i]) {
        m.outcome = Outcome::unsupported;
        m.detail = why;
      } else {
        reps = static_cast<size_t>(r.repetitions);
        occurrence[i] = occurrences_[request_key(r)]++;
      }
    }
    offset[i + 1] = offset[i] + reps;
  }
  std::vector<double> max_us(offset.back(), 0.0), sum_us(offset.back(), 0.0);
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!choices[i]) continue;
    const MeasureRequest& r = batch[i];
    const double truth = model_.true_time_us(r.collective, r.bytes, *choices[i]);
    const uint64_t key = request_key(r);
    for (int rep = 0; rep < r.repetitions; ++rep) {
      // One factor every rank shares (the fabric was busy) and a small positive one per rank (stragglers).
      uint64_t base = random::hash({seed_, key, occurrence[i], static_cast<uint64_t>(rep)});
      double common = std::max(0.5, 1.0 + noise_ * random::gaussian(base));
      double mx = 0.0, sum = 0.0;
      for (int rank = processes_.rank(); rank < ranks; rank += processes_.size()) {
        double jitter =
            1.0 +
            0.25 * noise_ * std::fabs(random::gaussian(random::hash({base, static_cast<uint64_t>(rank)})));
        double t = truth * common * jitter;
        mx = std::max(mx, t);
        sum += t;
      }
      max_us[offset[i] + static_cast<size_t>(rep)] = mx;
      sum_us[offset[i] + static_cast<size_t>(rep)] = sum;
    }
  }
  processes_.allreduce_max(max_us);
  processes_.allreduce_sum(sum_us);
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!choices[i]) continue;
    Measurement& m = out[i];
    const SimChoice& choice = *choices[i];
    for (size_t k = offset[i]; k < offset[i + 1]; ++k) {
      m.times_us.push_back(max_us[k]);
      m.mean_times_us.push_back(sum_us[k] / ranks);
    }
    double median = m.median_us();
    m.algbw_gbps = algbw_gbps(m.request.bytes, median);
    m.busbw_gbps = busbw_gbps(m.request.collective, ranks, m.request.bytes, median);
    m.used_algorithm = choice.algorithm;
    m.used_protocol = choice.protocol;
    m.used_channels = choice.channels;
    if (model_.corrupts(choice.algorithm, choice.protocol)) {
      m.outcome = Outcome::wrong_result;
      m.detail = "LL128 forced where NCCL would not enable it (no NVLink): the output did not match";
    }
  }
  return out;
}

}  // namespace autotune::sim
