// The launcher of one group of concurrent scales: srun narrowed by node count and offset, mpirun by its host
// list's slice; a launcher that cannot be narrowed says so (the scales then run in turn).
#include <catch2/catch.hpp>

#include "calibrate/group_launcher.hpp"

using namespace autotune;
using namespace autotune::calibrate;

TEST_CASE("group launcher: srun runs a group on its own nodes of the allocation, mpirun on its hosts") {
  const Launcher srun{{"srun", "-N", "16", "--ntasks-per-node", "8", "--mpi=pmix"}, "--launcher"};
  const ScaleGroup four_by_one{{4, 4}, 8};
  const auto s = launcher_for_group(srun, four_by_one);
  REQUIRE(s);
  CHECK(s->words == std::vector<std::string>{"srun", "-N", "4", "-n", "4", "--ntasks-per-node", "1",
                                             "--relative=8", "--mpi=pmix"});
  CHECK(s->origin == "--launcher, 4x1 on nodes 8-11");
  CHECK(launcher_nodes(s->words) == 4);

  const Launcher mpirun{{"mpirun", "-np", "32", "-H", "a:8,b:8,c:8,d:8", "--bind-to", "none"}, "--launcher"};
  const auto m = launcher_for_group(mpirun, {{2, 16}, 2});
  REQUIRE(m);
  CHECK(m->words == std::vector<std::string>{"mpirun", "-np", "16", "-H", "c:8,d:8", "--bind-to", "none"});
  CHECK_FALSE(launcher_for_group(mpirun, {{2, 16}, 3}));  // past the host list
  CHECK_FALSE(launcher_for_group({{"mpirun", "-np", "32"}, "--launcher"}, {{2, 16}, 0}));  // no hosts named
  CHECK_FALSE(launcher_for_group({{"pdsh", "-w", "a,b"}, "--launcher"}, {{2, 16}, 0}));
}
