// A FIFO queue in one contiguous array (power-of-two capacity, doubled when full): push_back and pop_front cost
// no allocation in steady state, where std::deque allocates and frees a 512-byte chunk every few elements (about
// one malloc/free per four 120-byte events, docs/driver.md "Issue 11, step 3"). Not bounded by itself: every
// owner bounds what it pushes (the engine's max_pending_events, the driver's event_queue_capacity). After a
// burst the array keeps its size until the queue drains below a quarter of a large capacity, then shrinks, so a
// burst does not pin memory for the rest of the process.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace netapprox::atp {

template <class T>
class Ring {
 public:
  static constexpr size_t kInitialCapacity = 16;
  static constexpr size_t kKeepCapacity = 1024;  // never shrunk below this

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }

  T& front() { return slots_[head_]; }
  const T& front() const { return slots_[head_]; }
  T& back() { return slots_[(head_ + size_ - 1) & (slots_.size() - 1)]; }
  const T& back() const { return slots_[(head_ + size_ - 1) & (slots_.size() - 1)]; }
  // The i-th element from the front (i < size()).
  T& operator[](size_t i) { return slots_[(head_ + i) & (slots_.size() - 1)]; }
  const T& operator[](size_t i) const { return slots_[(head_ + i) & (slots_.size() - 1)]; }

  void push_back(T v) {
    if (size_ == slots_.size()) resize(slots_.empty() ? kInitialCapacity : slots_.size() * 2);
    slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(v);
    ++size_;
  }

  // Fill-in-place push: the slot behind the back (capacity made), then commit_back() to make it the new back.
  // Lets a producer write an element straight into the queue (one move instead of two).
  T& prepare_back() {
    if (size_ == slots_.size()) resize(slots_.empty() ? kInitialCapacity : slots_.size() * 2);
    return slots_[(head_ + size_) & (slots_.size() - 1)];
  }
  void commit_back() { ++size_; }

  void pop_front() {
    slots_[head_] = T{};  // drop what the element owns now (a report, a buffer), not when the slot is reused
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
    if (size_ == 0) head_ = 0;
    if (slots_.size() > kKeepCapacity && size_ < slots_.size() / 4) resize(slots_.size() / 2);
  }

  void clear() {
    while (!empty()) pop_front();
  }

 private:
  void resize(size_t cap) {
    std::vector<T> next(cap);
    for (size_t i = 0; i < size_; ++i) next[i] = std::move((*this)[i]);
    slots_.swap(next);
    head_ = 0;
  }

  std::vector<T> slots_;  // capacity is a power of two (or zero)
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace netapprox::atp
