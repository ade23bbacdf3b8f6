// A bounded set of connection threads for the tools' TCP servers: at most `max` run at once, and each finished
// thread is joined (reaped) before a new one starts, so a server under connection churn holds neither more than
// `max` threads nor the stacks of finished ones (an unjoined thread keeps its stack mapping: about 32k of them
// exhausted the address-space map and ended atp-perf with std::system_error).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <system_error>
#include <thread>
#include <vector>

namespace netapprox::tools {

class ConnectionSlots {
 public:
  explicit ConnectionSlots(size_t max) : max_(max) {}
  ~ConnectionSlots() { join_all(); }
  ConnectionSlots(const ConnectionSlots&) = delete;
  ConnectionSlots& operator=(const ConnectionSlots&) = delete;

  // Runs fn on a new thread if a slot is free (after reaping finished threads); false when all are busy or the
  // thread cannot be created. Called from one thread (the accept loop).
  bool try_start(std::function<void()> fn) {
    reap();
    if (running_.size() >= max_) return false;
    auto done = std::make_shared<std::atomic<bool>>(false);
    try {
      std::thread t([fn = std::move(fn), done] {
        fn();
        done->store(true, std::memory_order_release);
      });
      running_.push_back(Slot{std::move(t), done});
      if (running_.size() > peak_) peak_ = running_.size();
    } catch (const std::system_error&) {
      return false;
    }
    started_++;
    return true;
  }

  // Joins every thread that has finished.
  void reap() {
    for (size_t i = 0; i < running_.size();) {
      if (running_[i].done->load(std::memory_order_acquire)) {
        running_[i].thread.join();
        running_[i] = std::move(running_.back());
        running_.pop_back();
        joined_++;
      } else {
        ++i;
      }
    }
  }

  void join_all() {
    for (auto& s : running_) s.thread.join();
    joined_ += running_.size();
    running_.clear();
  }

  size_t active() const { return running_.size(); }
  // Most threads alive at once (finished-but-unjoined ones count: their thread may still be exiting).
  size_t peak() const { return peak_; }
  uint64_t started() const { return started_; }
  uint64_t joined() const { return joined_; }

 private:
  struct Slot {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  size_t max_;
  std::vector<Slot> running_;
  size_t peak_ = 0;
  uint64_t started_ = 0, joined_ = 0;
};

}  // namespace netapprox::tools
