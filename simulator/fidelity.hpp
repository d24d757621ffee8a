#pragma once
// How far the simulated truth is from the published measurements (published_points.hpp): each point
// simulated as the source ran it (its machine, nodes, GPUs per node, environment and forced algorithm; NCCL's
// own choice otherwise) without noise, the busbw compared, and the table an operator reads to judge the
// model (`ctest -L fidelity`, under `bench --simulate`'s table). Pure functions: thread-safe.

#include <string>
#include <vector>

#include "simulator/published_points.hpp"
#include "simulator/sim_model.hpp"
#include "topology/model.hpp"

namespace autotune::sim {

struct FidelityRow {
  PublishedPoint point;
  SimChoice choice;             // what ran in the simulation
  double simulated_gbps = 0.0;  // busbw of the noise-free truth
  double error = 0.0;           // (simulated - published) / published
};

struct FidelitySummary {
  size_t points = 0;
  double median_abs_error = 0.0;
  double worst_abs_error = 0.0;
};

// One point on `node` (the point's machine, or a node built like it). Throws InputError when the point
// cannot run there (more GPUs than the node has, an algorithm it does not offer).
FidelityRow simulate_point(const PublishedPoint& point, const topology::Topology& node,
                           const SimDeviations& deviations = {});
// Every point on its bundled example.
std::vector<FidelityRow> fidelity_rows(const std::vector<PublishedPoint>& points,
                                       const SimDeviations& deviations = {});
// The points of the machine `node` is (the same GPU model, GPU count and NICs as a point's example).
std::vector<PublishedPoint> points_for(const topology::Topology& node);

FidelitySummary summarize(const std::vector<FidelityRow>& rows);
// The table: machine, scale, collective, size, algorithm (forced or NCCL's), published, simulated, error;
// every line starts with `prefix` ("# " under bench's table).
std::string format_fidelity(const std::vector<FidelityRow>& rows, const std::string& prefix = "");
// What `bench --simulate` prints under its table: the published figures of the machine `node` is, each
// simulated at its own scale, and how far the model is from them; or a line saying there are none.
std::string format_published_for(const topology::Topology& node, const SimDeviations& deviations = {});

}  // namespace autotune::sim
