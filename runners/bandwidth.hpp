#pragma once
// nccl-tests' bandwidth definitions, so that our numbers compare one to one with theirs: algbw is the bytes
// of the operation over its time (decimal GB/s), busbw scales algbw by how much data each rank must move for
// that collective (2(n-1)/n for AllReduce, (n-1)/n for AllGather/ReduceScatter with bytes = the whole buffer,
// 1 for Broadcast/Reduce; (n-1)/n for alltoall, gather and scatter, whose size is the whole buffer of a rank
// (alltoall's sent, gather's root's received, scatter's root's sent), and 1 for sendrecv, whose size is what
// each rank sends). Pure functions.

#include <cstdint>

#include "nccl/operation.hpp"
#include "nccl/vocabulary.hpp"

namespace autotune::runners {

// Decimal GB/s for `bytes` moved in `time_us` microseconds; 0 when the time is not positive.
double algbw_gbps(uint64_t bytes, double time_us);
double busbw_gbps(nccl::Collective c, int ranks, uint64_t bytes, double time_us);
double busbw_gbps(nccl::Operation op, int ranks, uint64_t bytes, double time_us);

// nccl-tests' element count for a size: bytes / sizeof(float), divided by the ranks for AllGather and
// ReduceScatter (their size is the whole buffer; the count is per rank). For alltoall, gather and scatter the
// count per peer, which nccl-tests rounds down to whole 16-byte units (so alltoall's count divides evenly).
uint64_t element_count(nccl::Collective c, int ranks, uint64_t bytes, int element_size = 4);
uint64_t element_count(nccl::Operation op, int ranks, uint64_t bytes, int element_size = 4);

}  // namespace autotune::runners
