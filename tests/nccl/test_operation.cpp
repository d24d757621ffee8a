#include <catch2/catch.hpp>

#include "nccl/operation.hpp"

using namespace autotune::nccl;

TEST_CASE("operations: collectives keep NCCL's ids, point-to-point ones have no collective", "[operation]") {
  for (Collective c : kAllCollectives) {
    CHECK(as_collective(to_operation(c)) == c);
    CHECK(name(to_operation(c)) == name(c));
    CHECK_FALSE(is_point_to_point(to_operation(c)));
  }
  for (Operation op : kPointToPointOperations) {
    CHECK(is_point_to_point(op));
    CHECK_FALSE(as_collective(op).has_value());
  }
  CHECK(static_cast<int>(Operation::allreduce) == static_cast<int>(Collective::allreduce));
}

TEST_CASE("operations: names parse back, NCCL's and nccl-tests' spellings too", "[operation]") {
  for (int i = 0; i < kNumOperations; ++i) {
    auto op = static_cast<Operation>(i);
    CHECK(parse_operation(name(op)) == op);
  }
  CHECK(parse_operation("AllToAll") == Operation::alltoall);
  CHECK(parse_operation("SendRecv") == Operation::sendrecv);
  CHECK(parse_operation("AllReduce") == Operation::allreduce);
  CHECK_FALSE(parse_operation("alltoallv").has_value());
  CHECK_FALSE(parse_operation("").has_value());
}

TEST_CASE("operations: nccl-tests' bus bandwidth factors", "[operation]") {
  // nccl-tests doc/PERFORMANCE.md: alltoall, gather, scatter (n-1)/n; sendrecv 1; allreduce 2(n-1)/n.
  CHECK(bus_bandwidth_factor(Operation::alltoall, 8) == Approx(0.875));
  CHECK(bus_bandwidth_factor(Operation::gather, 4) == Approx(0.75));
  CHECK(bus_bandwidth_factor(Operation::scatter, 2) == Approx(0.5));
  CHECK(bus_bandwidth_factor(Operation::sendrecv, 16) == Approx(1.0));
  CHECK(bus_bandwidth_factor(Operation::allreduce, 8) == Approx(1.75));
  CHECK(bus_bandwidth_factor(Operation::alltoall, 0) == 0.0);
}
