#pragma once
// The profiler half's aggregates: per (communicator shape, collective, size bucket, the algorithm, protocol
// and channels NCCL ran) the count, sums of bytes and times, min, max and a log-scale histogram of GPU times,
// from which mean and quantiles are read. Fixed memory, allocated once (static storage, kCells cells):
// record() never allocates, never locks and never blocks; a key that finds the table full is counted as
// dropped. Thread-safe: any number of threads may record() and snapshot() at once (a snapshot taken during a
// record may see the count one ahead of the sum; the writer tolerates it).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace autotune::plugin::telemetry {

// What one aggregate is about. bytes_log2 is floor(log2(tuner bytes)): the size bucket.
struct Key {
  int nodes = 0;
  int ranks = 0;
  int collective = 0;  // ncclFunc_t
  int bytes_log2 = 0;
  int algorithm = 0;  // NCCL_ALGO_*
  int protocol = 0;   // NCCL_PROTO_*
  int channels = 0;
  bool operator==(const Key&) const = default;
};

// Histogram bins: four per power of two from 250 ns, so a quantile is known to within 19 %; times beyond the
// last bin (about 4 s) fall into it (max stays exact).
inline constexpr int kBins = 96;
inline constexpr uint64_t kFirstBinNs = 250;
inline constexpr size_t kCells = 512;

int bin_of(uint64_t ns) noexcept;
double bin_middle_us(int bin) noexcept;  // the geometric middle of a bin

uint64_t pack(const Key& k) noexcept;  // never 0 (0 marks a free cell)
Key unpack(uint64_t packed) noexcept;

struct Aggregate {
  Key key;
  uint64_t count = 0;
  double mean_bytes = 0;
  double mean_us = 0, min_us = 0, max_us = 0;
  double p25_us = 0, p50_us = 0, p75_us = 0, p90_us = 0, p99_us = 0;
};

class Table {
 public:
  void record(const Key& key, uint64_t bytes, uint64_t ns) noexcept;
  void record_packed(uint64_t packed, uint64_t bytes, uint64_t ns) noexcept;
  std::vector<Aggregate> snapshot() const;  // allocates: for the writer thread, never a collective
  uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  void clear() noexcept;  // tests

  static Table& process();  // the one table of this process
  static constexpr size_t bytes() { return sizeof(Table); }

 private:
  struct Cell {
    std::atomic<uint64_t> key{0};
    std::atomic<uint64_t> count{0}, sum_ns{0}, sum_bytes{0}, min_ns{UINT64_MAX}, max_ns{0};
    std::atomic<uint32_t> hist[kBins] = {};
  };
  Cell cells_[kCells];
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace autotune::plugin::telemetry
