#pragma once
// A valid profile exercising every field the compiled rules keep: every collective with each algorithm and
// protocol NCCL allows for it, channels 0..64, and four disjoint scales (nodes only, nodes and ranks, ranks
// only, any scale) with rules of each. Shared by the profile and plugin tests of compiled rules.

#include <cstdint>
#include <optional>

#include "nccl/vocabulary.hpp"
#include "profiles/profile.hpp"

namespace autotune::profiles::test {

inline Profile many_rules_profile(int per_scale = 40) {
  Profile p;
  p.cluster.name = "many-rules";
  p.cluster.fingerprint = "fp-1234";
  p.cluster.gpu_model = "H100";
  p.cluster.gpus_per_node = 8;
  p.cluster.nodes = 4;
  p.cluster.nics_per_node = 8;
  p.provenance.created = "2026-01-01T00:00:00Z";
  p.provenance.tool_version = "0.1.0";
  p.provenance.nccl_version = "2.28.9";
  p.provenance.source = Source::measured;
  p.provenance.command = "nccl-autotune tune --test";
  p.env["NCCL_BUFFSIZE"] = "4194304";
  p.uncalibrated = UncalibratedPolicy::nearest_scale;
  // Disjoint in (nodes, ranks); the any-scale rules are disjoint from the rest by their byte ranges.
  struct Scale {
    std::optional<CountRange> nodes, ranks;
    uint64_t base;
  };
  const Scale scales[] = {{CountRange{1, 1}, CountRange{1, 8}, 0},
                          {CountRange{2, 4}, CountRange{16, 32}, 0},
                          {std::nullopt, CountRange{1000, 2000}, 0},
                          {std::nullopt, std::nullopt, uint64_t(1) << 40}};
  int n = 0;
  for (nccl::Collective c : nccl::kAllCollectives)
    for (const Scale& s : scales)
      for (int i = 0; i < per_scale; ++i, ++n) {
        Rule r;
        r.collective = c;
        r.min_bytes = s.base + uint64_t(i) * 65536;
        r.max_bytes = r.min_bytes + 65535 - uint64_t(i % 7);  // some gaps between ranges
        // The n-th allowed (algorithm, protocol) pair for this collective, cycling.
        int allowed = 0;
        for (nccl::Algorithm a : nccl::kAllAlgorithms)
          for (nccl::Protocol pr : nccl::kAllProtocols)
            if (is_allowed(c, a, pr)) ++allowed;
        int pick = n % allowed;
        for (nccl::Algorithm a : nccl::kAllAlgorithms)
          for (nccl::Protocol pr : nccl::kAllProtocols)
            if (is_allowed(c, a, pr) && pick-- == 0) r.algorithm = a, r.protocol = pr;
        r.channels = n % 65;
        r.nodes = s.nodes;
        r.ranks = s.ranks;
        if (i % 3 == 0) r.busbw_gbps = 100.0 + i, r.default_busbw_gbps = 90.0, r.samples = 5;
        p.rules.push_back(r);
      }
  return p;
}

}  // namespace autotune::profiles::test
