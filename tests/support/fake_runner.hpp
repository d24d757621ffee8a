#pragma once
// A scripted Runner for the search-engine tests: a small made-up cluster whose truth is latency + bytes /
// bandwidth per algorithm and protocol, whose "NCCL default" picks by a deliberately biased copy of that
// model (so that rules have something to win), with seeded noise that is a pure function of (request,
// occurrence, repetition). It records every request it was asked, and can be told to die after some batches.

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "runners/runner.hpp"
#include "search/strategy_samples.hpp"

namespace autotune::search::testing {

struct FakeCluster {
  double noise = 0.01;
  double nvls_bw_truth = 150.0;  // NCCL's estimate below says 100: it under-uses NVLS for large messages
  int ranks = 8;
  // Setting-dependent speed-up, to test the [env] choice.
  double speed = 1.0;

  struct Cost {
    double lat_us, bw_gbps;
  };
  std::optional<Cost> cost(nccl::Collective c, nccl::Algorithm a, nccl::Protocol p, bool estimate) const {
    if (!nccl::is_allowed(c, a, p)) return std::nullopt;
    switch (a) {
      case nccl::Algorithm::tree:
        if (c != nccl::Collective::allreduce) return std::nullopt;
        return p == nccl::Protocol::ll      ? Cost{8, 20}
               : p == nccl::Protocol::ll128 ? Cost{12, 60}
                                            : Cost{20, 90};
      case nccl::Algorithm::ring:
        if (p == nccl::Protocol::ll) return Cost{6, 25};
        if (p == nccl::Protocol::ll128) return Cost{estimate ? 14.0 : 10.0, 70};
        return Cost{15, 100};
      case nccl::Algorithm::nvls:
        if (c != nccl::Collective::allreduce && c != nccl::Collective::allgather) return std::nullopt;
        return Cost{25, estimate ? 100.0 : nvls_bw_truth};
      default:
        return std::nullopt;
    }
  }
  double time_us(nccl::Collective c, uint64_t bytes, nccl::Algorithm a, nccl::Protocol p,
                 bool estimate = false) const {
    auto k = cost(c, a, p, estimate);
    double t = k->lat_us + static_cast<double>(bytes) / (k->bw_gbps * 1e3);
    return estimate ? t : t / speed;
  }
  Choice nccl_default(nccl::Collective c, uint64_t bytes) const {
    std::optional<Choice> best;
    double best_t = 0;
    for (nccl::Algorithm a : nccl::kAllAlgorithms)
      for (nccl::Protocol p : nccl::kAllProtocols)
        if (cost(c, a, p, true)) {
          double t = time_us(c, bytes, a, p, true);
          if (!best || t < best_t) best = Choice{a, p, 0}, best_t = t;
        }
    return *best;
  }
  Choice best_true(nccl::Collective c, uint64_t bytes) const {
    std::optional<Choice> best;
    double best_t = 0;
    for (nccl::Algorithm a : nccl::kAllAlgorithms)
      for (nccl::Protocol p : nccl::kAllProtocols)
        if (cost(c, a, p, false) && !(c == nccl::Collective::reducescatter && p == nccl::Protocol::ll128)) {
          double t = time_us(c, bytes, a, p);
          if (!best || t < best_t) best = Choice{a, p, 0}, best_t = t;
        }
    return *best;
  }
};

inline double fake_unit_noise(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) / static_cast<double>(1ull << 53) * 2.0 - 1.0;  // [-1, 1)
}

class FakeRunner : public runners::Runner {
 public:
  // `log`, when given, receives every request too (it outlives the runner, which tune() destroys).
  explicit FakeRunner(FakeCluster cluster, int die_after_batches = -1,
                      std::vector<runners::MeasureRequest>* log = nullptr)
      : cluster_(cluster), die_after_(die_after_batches), log_(log) {}

  runners::RunnerInfo info() const override {
    return {"fake", "simulated", cluster_.ranks, 1, cluster_.ranks, "FakeGPU", "2.28.9", "fake runner"};
  }

  std::vector<runners::Measurement> run(std::span<const runners::MeasureRequest> batch) override {
    if (die_after_ >= 0 && batches_ >= die_after_) throw std::runtime_error("fake runner died");
    ++batches_;
    std::vector<runners::Measurement> out;
    for (const auto& r : batch) {
      asked.push_back(r);
      if (log_) log_->push_back(r);
      runners::Measurement m;
      m.request = r;
      Choice run = cluster_.nccl_default(r.collective, r.bytes);
      if (r.candidate.algorithm) run.algorithm = *r.candidate.algorithm;
      if (r.candidate.protocol) run.protocol = *r.candidate.protocol;
      if (!cluster_.cost(r.collective, run.algorithm, run.protocol, false)) {
        m.outcome = runners::Outcome::unsupported;
        m.detail = "not on this fake cluster";
        out.push_back(m);
        continue;
      }
      if (r.collective == nccl::Collective::reducescatter && run.protocol == nccl::Protocol::ll128 &&
          r.candidate.protocol) {
        m.outcome = runners::Outcome::wrong_result;
        m.detail = "12 wrong elements";
        out.push_back(m);
        continue;
      }
      double t = cluster_.time_us(r.collective, r.bytes, run.algorithm, run.protocol);
      auto key = key_of(r.candidate);
      uint64_t h = (static_cast<uint64_t>(r.collective) * 1000003ull + r.bytes) * 31 +
                   static_cast<uint64_t>(std::get<0>(key) + 2) * 7 +
                   static_cast<uint64_t>(std::get<1>(key) + 2);
      int occurrence = occurrences_[h]++;
      for (int rep = 0; rep < r.repetitions; ++rep) {
        double noisy =
            t * (1.0 + cluster_.noise * fake_unit_noise(h * 1315423911ull + occurrence * 977 + rep));
        m.times_us.push_back(noisy);
        m.mean_times_us.push_back(noisy * 0.99);
      }
      m.algbw_gbps = static_cast<double>(r.bytes) / (m.median_us() * 1e3);
      m.busbw_gbps = m.algbw_gbps * nccl::bus_bandwidth_factor(r.collective, cluster_.ranks);
      m.used_algorithm = run.algorithm;
      m.used_protocol = run.protocol;
      out.push_back(m);
    }
    return out;
  }

  std::vector<runners::MeasureRequest> asked;

 private:
  FakeCluster cluster_;
  int die_after_;
  std::vector<runners::MeasureRequest>* log_;
  int batches_ = 0;
  std::map<uint64_t, int> occurrences_;
};

}  // namespace autotune::search::testing
