// What a request may force, the check of every rank's output, and how the ranks' times combine: the parts of
// NcclRunner::State that decide rather than drive the GPUs.
#include <algorithm>

#include <fmt/format.h>

#include "nccl_runner/p2p_ops.hpp"
#include "nccl_runner/runner_state.hpp"
#include "runners/measure_plan.hpp"
#include "runners/watchdog.hpp"

namespace autotune::nccl_runner {

using runners::Outcome;

std::optional<std::pair<Outcome, std::string>> NcclRunner::State::precheck(
    const runners::MeasureRequest& r) const {
  const runners::Candidate& c = r.candidate;
  if (r.repetitions < 1)
    return std::pair{Outcome::failed, fmt::format("repetitions must be at least 1, got {}", r.repetitions)};
  if (r.point_to_point) {
    if (!c.is_default())
      return std::pair{Outcome::unsupported, "nothing can be forced for " +
                                                 std::string(nccl::name(*r.point_to_point)) +
                                                 ": NCCL's tuner never sees point-to-point operations"};
    if (auto why = p2p_unavailable(*r.point_to_point)) return std::pair{Outcome::failed, *why};
    return std::nullopt;
  }
  if (c.is_default()) return std::nullopt;
  if (!hook.usable())
    return std::pair{Outcome::failed, "cannot force " + to_string(c) + ": " + hook.problem()};
  if (c.algorithm.has_value() != c.protocol.has_value())
    return std::pair{Outcome::failed, "the sweep hook forces an algorithm together with a protocol; " +
                                          to_string(c) + " names only one"};
  if (c.algorithm && !nccl::is_allowed(r.collective, *c.algorithm, *c.protocol))
    return std::pair{Outcome::unsupported,
                     fmt::format("NCCL has no {}/{} for {}", nccl::nccl_name(*c.algorithm),
                                 nccl::nccl_name(*c.protocol), nccl::nccl_name(r.collective))};
  return std::nullopt;
}

void NcclRunner::State::check_results(const runners::MeasureRequest& r, const runners::BufferCounts& counts) {
  const nccl::Operation op = r.operation();
  // nccl-tests checks neither alltoall's nor sendrecv's in-place half: the buffer is read while written.
  if (options.in_place && (op == nccl::Operation::alltoall || op == nccl::Operation::sendrecv)) return;
  const uint64_t recv_bytes = counts.recv * sizeof(float);
  for (auto& d : devices) {
    if (!active(d)) continue;
    cuda_check(cudaSetDevice(d.id), "cudaSetDevice");
    // All bits set is a NaN: a buffer NCCL never wrote can never compare equal.
    if (recv_bytes) cuda_check(cudaMemsetAsync(d.recv, 0xff, recv_bytes, d.stream), "cudaMemsetAsync");
    std::vector<float> input = runners::make_input(op, members, d.member, r.bytes);
    auto [send, recv] = pointers(d, op, counts);
    (void)recv;
    if (!input.empty())
      cuda_check(cudaMemcpyAsync(const_cast<void*>(send), input.data(), input.size() * sizeof(float),
                                 cudaMemcpyHostToDevice, d.stream),
                 "cudaMemcpyAsync (input)");
    // The copy reads pageable host memory that goes out of scope here.
    cuda_check(cudaStreamSynchronize(d.stream), "cudaStreamSynchronize");
  }
  launch(op, counts, 1, false);
  wait(r.bytes, 1);
  uint64_t wrong = 0;
  std::string first;
  for (auto& d : devices) {
    if (!active(d)) continue;
    auto expected = runners::expected_output(op, members, d.member, r.bytes);
    if (!expected) continue;
    std::vector<float> found(expected->size());
    auto [send, recv] = pointers(d, op, counts);
    (void)send;
    cuda_check(cudaSetDevice(d.id), "cudaSetDevice");
    if (!found.empty())
      cuda_check(
          cudaMemcpyAsync(found.data(), recv, found.size() * sizeof(float), cudaMemcpyDeviceToHost, d.stream),
          "cudaMemcpyAsync (output)");
    cuda_check(cudaStreamSynchronize(d.stream), "cudaStreamSynchronize");
    runners::CheckResult check = runners::compare_exact(*expected, found);
    if (!check.ok() && first.empty())
      first = fmt::format("rank {}{}: {}", d.rank, layout ? fmt::format(" (group {})", d.group) : "",
                          check.describe());
    wrong += check.wrong;
  }
  if (wrong) throw runners::StepFailure(Outcome::wrong_result, first);
}

// Every process reaches here with the same outcome and repetitions, so all of them combine (also one whose
// devices sit the shape out): per repetition the slowest rank of any group and the mean over the ranks that
// measured, and per group the median of its slowest rank.
void NcclRunner::State::combine_times(const std::vector<std::vector<double>>& per_device,
                                      runners::Measurement& m) const {
  const size_t reps = static_cast<size_t>(m.request.repetitions);
  const int groups = layout ? layout->groups() : 1;
  std::vector<double> max_us(reps, 0.0), sum_us(reps, 0.0), group_us(static_cast<size_t>(groups) * reps, 0.0);
  size_t k = 0;
  for (const auto& d : devices) {
    if (!active(d)) continue;
    const auto& times = per_device[k++];
    for (size_t rep = 0; rep < reps && rep < times.size(); ++rep) {
      max_us[rep] = std::max(max_us[rep], times[rep]);
      sum_us[rep] += times[rep];
      double& slot = group_us[static_cast<size_t>(d.group) * reps + rep];
      slot = std::max(slot, times[rep]);
    }
  }
  processes.allreduce_max(max_us);
  processes.allreduce_sum(sum_us);
  processes.allreduce_max(group_us);
  m.times_us = max_us;
  for (double s : sum_us) m.mean_times_us.push_back(s / (groups * members));
  if (!layout) return;
  for (int g = 0; g < groups; ++g) {
    std::vector<double> v(group_us.begin() + g * reps, group_us.begin() + (g + 1) * reps);
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    m.group_times_us.push_back(v.empty() ? 0.0 : v[v.size() / 2]);
  }
}

}  // namespace autotune::nccl_runner
