#pragma once
// A stand-in for an MPI job inside one test process: N ranks, each a thread holding its own ProcessGroup
// view, whose collectives really exchange values through shared memory. Lets tests drive code written for
// several processes (lock-step agreement, a journal only rank 0 writes) and see whether every rank leaves the
// same way. Every collective is also a barrier; one that not every rank reaches within `timeout` throws
// instead of hanging (the failure a test looks for), and the group then stays broken.
// Thread-safe by construction: one thread per rank.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runners/process_group.hpp"

namespace autotune::test {

class ThreadGroupState {
 public:
  ThreadGroupState(int size, std::chrono::milliseconds timeout)
      : size_(size), timeout_(timeout), slots_(size) {}

  // Deposits `mine` as rank's contribution and returns every rank's, once all have deposited.
  std::vector<std::vector<std::byte>> exchange(int rank, std::vector<std::byte> mine) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (broken_) throw std::runtime_error("thread process group: broken by an earlier timeout");
    const long generation = generation_;
    slots_[rank] = std::move(mine);
    if (++arrived_ == size_) {
      result_ = slots_;
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return result_;
    }
    if (!cv_.wait_for(lock, timeout_, [&] { return generation_ != generation || broken_; }) || broken_) {
      broken_ = true;
      cv_.notify_all();
      throw std::runtime_error("thread process group: rank " + std::to_string(rank) +
                               " waited for the others in a collective that not every rank reached (a hang)");
    }
    return result_;
  }
  int size() const { return size_; }

 private:
  const int size_;
  const std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::vector<std::byte>> slots_, result_;
  int arrived_ = 0;
  long generation_ = 0;
  bool broken_ = false;
};

class ThreadProcessGroup final : public runners::ProcessGroup {
 public:
  // ranks_per_node 0: every rank on one node; else ranks placed node by node, that many per node.
  ThreadProcessGroup(std::shared_ptr<ThreadGroupState> state, int rank, int ranks_per_node = 0)
      : state_(std::move(state)),
        rank_(rank),
        per_node_(ranks_per_node > 0 ? ranks_per_node : state_->size()) {}
  int rank() const override { return rank_; }
  int size() const override { return state_->size(); }
  int local_rank() const override { return rank_ % per_node_; }
  int local_size() const override { return per_node_; }
  void allreduce_max(std::span<double> v) const override {
    reduce(v, [](double a, double b) { return std::max(a, b); });
  }
  void allreduce_sum(std::span<double> v) const override {
    reduce(v, [](double a, double b) { return a + b; });
  }
  void allreduce_min(std::span<int> v) const override {
    reduce(v, [](int a, int b) { return std::min(a, b); });
  }
  void broadcast(std::span<std::byte> bytes, int root) const override {
    auto all = state_->exchange(rank_, {bytes.begin(), bytes.end()});
    std::copy(all[root].begin(), all[root].end(), bytes.begin());
  }
  void barrier() const override { state_->exchange(rank_, {}); }

 private:
  template <typename T, typename Op>
  void reduce(std::span<T> values, Op op) const {
    std::vector<std::byte> mine(values.size_bytes());
    std::memcpy(mine.data(), values.data(), mine.size());
    auto all = state_->exchange(rank_, std::move(mine));
    for (size_t i = 0; i < values.size(); ++i) {
      T acc;
      std::memcpy(&acc, all[0].data() + i * sizeof(T), sizeof(T));
      for (size_t r = 1; r < all.size(); ++r) {
        T x;
        std::memcpy(&x, all[r].data() + i * sizeof(T), sizeof(T));
        acc = op(acc, x);
      }
      values[i] = acc;
    }
  }
  std::shared_ptr<ThreadGroupState> state_;
  int rank_;
  int per_node_;
};

// Runs body(rank, group) on `ranks` threads and joins them; each rank's exception text ("" when it returned)
// in rank order.
inline std::vector<std::string> run_ranks(int ranks,
                                          const std::function<void(int, const runners::ProcessGroup&)>& body,
                                          std::chrono::milliseconds timeout = std::chrono::seconds(5),
                                          int ranks_per_node = 0) {
  auto state = std::make_shared<ThreadGroupState>(ranks, timeout);
  std::vector<std::string> errors(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      ThreadProcessGroup group(state, r, ranks_per_node);
      try {
        body(r, group);
      } catch (const std::exception& e) {
        errors[r] = e.what();
        if (errors[r].empty()) errors[r] = "(exception without text)";
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

}  // namespace autotune::test
