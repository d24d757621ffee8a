#include "plugins/telemetry_table.hpp"

#include <algorithm>
#include <cmath>

namespace autotune::plugin::telemetry {

int bin_of(uint64_t ns) noexcept {
  const uint64_t v = ns / kFirstBinNs;
  if (v < 4) return static_cast<int>(v);  // 0..3: below 1 us, in quarters of the first step
  const int msb = 63 - __builtin_clzll(v);
  const int bin = msb * 4 + static_cast<int>((v >> (msb - 2)) & 3u) - 4;
  return bin < kBins ? bin : kBins - 1;
}

double bin_middle_us(int bin) noexcept {
  if (bin < 4) return (bin + 0.5) * kFirstBinNs / 1000.0;
  const int msb = (bin + 4) / 4;
  const int quarter = (bin + 4) % 4;
  const double low = std::ldexp(1.0 + quarter / 4.0, msb), high = std::ldexp(1.0 + (quarter + 1) / 4.0, msb);
  return std::sqrt(low * high) * kFirstBinNs / 1000.0;
}

// Bit 63 set; nodes 13 bits, ranks 17, collective 3, bytes_log2 6, algorithm 3, protocol 2, channels 7.
uint64_t pack(const Key& k) noexcept {
  auto field = [](int v, int bits) { return static_cast<uint64_t>(v) & ((uint64_t{1} << bits) - 1); };
  return uint64_t{1} << 63 | field(k.nodes, 13) << 50 | field(k.ranks, 17) << 33 |
         field(k.collective, 3) << 30 | field(k.bytes_log2, 6) << 24 | field(k.algorithm, 3) << 21 |
         field(k.protocol, 2) << 19 | field(k.channels, 7) << 12;
}

Key unpack(uint64_t p) noexcept {
  auto field = [&](int shift, int bits) {
    return static_cast<int>((p >> shift) & ((uint64_t{1} << bits) - 1));
  };
  return Key{field(50, 13), field(33, 17), field(30, 3), field(24, 6),
             field(21, 3),  field(19, 2),  field(12, 7)};
}

void Table::record(const Key& key, uint64_t bytes, uint64_t ns) noexcept {
  record_packed(pack(key), bytes, ns);
}

void Table::record_packed(uint64_t packed, uint64_t bytes, uint64_t ns) noexcept {
  // Open addressing from the key's hash; a cell is claimed once and keeps its key for the process's life.
  uint64_t h = packed * 0x9E3779B97F4A7C15ull;
  for (size_t probe = 0; probe < 16; ++probe) {
    Cell& c = cells_[(h >> 40) % kCells];
    uint64_t k = c.key.load(std::memory_order_acquire);
    if (k == 0 && c.key.compare_exchange_strong(k, packed, std::memory_order_acq_rel)) k = packed;
    if (k == packed) {
      c.count.fetch_add(1, std::memory_order_relaxed);
      c.sum_ns.fetch_add(ns, std::memory_order_relaxed);
      c.sum_bytes.fetch_add(bytes, std::memory_order_relaxed);
      uint64_t m = c.min_ns.load(std::memory_order_relaxed);
      while (ns < m && !c.min_ns.compare_exchange_weak(m, ns, std::memory_order_relaxed)) {
      }
      m = c.max_ns.load(std::memory_order_relaxed);
      while (ns > m && !c.max_ns.compare_exchange_weak(m, ns, std::memory_order_relaxed)) {
      }
      c.hist[bin_of(ns)].fetch_add(1, std::memory_order_relaxed);
      return;
    }
    h += 0x632BE59BD9B4E019ull;
  }
  dropped_.fetch_add(1, std::memory_order_relaxed);
}

namespace {

double quantile(const uint32_t* hist, uint64_t total, double q) {
  const double want = q * static_cast<double>(total);
  uint64_t seen = 0;
  for (int b = 0; b < kBins; ++b) {
    seen += hist[b];
    if (static_cast<double>(seen) >= want && seen > 0) return bin_middle_us(b);
  }
  return bin_middle_us(kBins - 1);
}

}  // namespace

std::vector<Aggregate> Table::snapshot() const {
  std::vector<Aggregate> out;
  for (const Cell& c : cells_) {
    const uint64_t k = c.key.load(std::memory_order_acquire);
    if (k == 0) continue;
    uint32_t hist[kBins];
    uint64_t total = 0;
    for (int b = 0; b < kBins; ++b) total += hist[b] = c.hist[b].load(std::memory_order_relaxed);
    const uint64_t count = c.count.load(std::memory_order_relaxed);
    if (count == 0 || total == 0) continue;
    Aggregate a;
    a.key = unpack(k);
    a.count = count;
    a.mean_us = static_cast<double>(c.sum_ns.load(std::memory_order_relaxed)) / count / 1000.0;
    a.mean_bytes = static_cast<double>(c.sum_bytes.load(std::memory_order_relaxed)) / count;
    a.min_us = static_cast<double>(c.min_ns.load(std::memory_order_relaxed)) / 1000.0;
    a.max_us = static_cast<double>(c.max_ns.load(std::memory_order_relaxed)) / 1000.0;
    a.p25_us = quantile(hist, total, 0.25);
    a.p50_us = quantile(hist, total, 0.50);
    a.p75_us = quantile(hist, total, 0.75);
    a.p90_us = quantile(hist, total, 0.90);
    a.p99_us = quantile(hist, total, 0.99);
    // A bin's middle may lie outside what was seen (every time alike: min = max): never report beyond it.
    for (double* q : {&a.p25_us, &a.p50_us, &a.p75_us, &a.p90_us, &a.p99_us})
      *q = std::min(std::max(*q, a.min_us), a.max_us);
    out.push_back(a);
  }
  return out;
}

void Table::clear() noexcept {
  for (Cell& c : cells_) {
    c.key.store(0);
    c.count.store(0), c.sum_ns.store(0), c.sum_bytes.store(0), c.min_ns.store(UINT64_MAX), c.max_ns.store(0);
    for (auto& h : c.hist) h.store(0);
  }
  dropped_.store(0);
}

namespace {
// Constant-initialised with a trivial destructor: valid before and after every static object's lifetime,
// so the final flush from an exit handler still reads it.
constinit Table g_table;
}  // namespace

Table& Table::process() {
  return g_table;
}

}  // namespace autotune::plugin::telemetry
