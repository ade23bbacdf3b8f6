// A send job's ready set: the messages with segments to send, as (key, message id) pairs taken smallest first
// (key: MRDF's remaining bytes, or 0 for message order and exact groups; ties by id keep message order).
//
// Most insertions come in ascending id order with one key (message order, exact groups, MRDF over equal-sized
// messages): those go to a run, a ring of ids in ascending order with one key, and cost no tree work and no
// allocation. Everything else - a retransmission of an older message, a message whose key changed - goes to an
// ordered set. front() is the smaller of the two heads, so the order is exactly that of one ordered set
// (ReadyQueueTest compares them over random operations).
//
// An erased run entry is only marked (a bitmap over message ids) and skipped once it reaches the front. The run
// holds strictly ascending ids of the job, so it never has more than N entries, marked ones included.
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "core/buffer.hpp"
#include "core/engine.hpp"
#include "core/pool.hpp"
#include "core/ring.hpp"

namespace netapprox::atp {

class ReadyQueue {
 public:
  using Entry = std::pair<uint64_t, MessageId>;

  // Message ids are below n_messages; the set's nodes come from `nodes` (which must outlive the queue).
  ReadyQueue(uint32_t n_messages, NodePool* nodes)
      : in_run_(bitmap(n_messages)), rest_(std::less<Entry>{}, Set::allocator_type(nodes)) {}

  bool empty() const { return run_live_ == 0 && rest_.empty(); }
  size_t size() const { return run_live_ + rest_.size(); }
  // The smallest entry (not empty()).
  Entry front() const {
    if (run_live_ == 0) return *rest_.begin();
    const Entry head{run_key_, run_.front()};
    return rest_.empty() || head < *rest_.begin() ? head : *rest_.begin();
  }
  // Inserts an entry that is not in the queue.
  void insert(uint64_t key, MessageId m) {
    if (run_live_ == 0) {
      run_.clear();  // only erased entries are left
      run_key_ = key;
    }
    if (key == run_key_ && (run_.empty() || m > run_.back())) {
      run_.push_back(m);
      bit_set(in_run_, m);
      run_live_++;
      return;
    }
    rest_.insert({key, m});
  }
  // Erases an entry that is in the queue (the key it was inserted with).
  void erase(uint64_t key, MessageId m) {
    if (bit_get(in_run_, m)) {
      bit_clear(m);
      run_live_--;
      while (!run_.empty() && !bit_get(in_run_, run_.front())) run_.pop_front();
      return;
    }
    rest_.erase({key, m});
  }
  void clear() {
    while (!run_.empty()) {
      bit_clear(run_.front());
      run_.pop_front();
    }
    run_live_ = 0;
    rest_.clear();
  }
  // Entries of the run, erased ones included (tests: the bound).
  size_t run_entries() const { return run_.size(); }

 private:
  using Set = std::set<Entry, std::less<Entry>, PoolAllocator<Entry>>;
  void bit_clear(MessageId m) { in_run_[m / 64] &= ~(uint64_t{1} << (m % 64)); }

  Ring<MessageId> run_;  // ascending ids, all with key run_key_; erased ones have their bit cleared
  uint64_t run_key_ = 0;
  uint32_t run_live_ = 0;         // entries of run_ not erased
  std::vector<uint64_t> in_run_;  // bitmap over message ids: in run_ and not erased
  Set rest_;
};

}  // namespace netapprox::atp
