// ReadyQueue (native/src/core/ready_queue.hpp), a send job's ready set: the same order as one ordered set of
// (key, id) pairs over random insertions and erasures (seeded), the run's bound, and no tree node for the common
// in-order case.
#include "core/ready_queue.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>

using namespace netapprox::atp;

namespace {

// Random operations against a std::set reference. `keys` distinct keys; `in_order_bias` (percent) of the
// insertions take the next id in order with key 0, as a steady send job does.
void compare_with_set(uint32_t seed, uint32_t n, uint32_t keys, uint32_t in_order_bias) {
  NodePool nodes;
  ReadyQueue q(n, &nodes);
  std::set<ReadyQueue::Entry> ref;
  std::vector<uint64_t> key_of(n, UINT64_MAX);  // the key an id is in the queue with, or none
  std::mt19937 rng(seed);
  uint32_t next_in_order = 0;
  for (int step = 0; step < 200000; ++step) {
    const uint32_t op = rng() % 100;
    if (op < 45) {  // insert
      MessageId m;
      uint64_t k;
      if (rng() % 100 < in_order_bias) {
        m = next_in_order++ % n;
        k = 0;
      } else {
        m = rng() % n;
        k = rng() % keys;
      }
      if (key_of[m] != UINT64_MAX) continue;
      q.insert(k, m);
      ref.insert({k, m});
      key_of[m] = k;
    } else if (op < 75) {  // take the front, as take_next_segment does
      if (ref.empty()) continue;
      ASSERT_EQ(q.front(), *ref.begin()) << "step " << step;
      const auto [k, m] = *ref.begin();
      q.erase(k, m);
      ref.erase(ref.begin());
      key_of[m] = UINT64_MAX;
    } else if (op < 99) {  // erase anywhere (acknowledged, abandoned, re-keyed)
      const MessageId m = rng() % n;
      if (key_of[m] == UINT64_MAX) continue;
      q.erase(key_of[m], m);
      ref.erase({key_of[m], m});
      key_of[m] = UINT64_MAX;
    } else {
      q.clear();
      ref.clear();
      std::fill(key_of.begin(), key_of.end(), UINT64_MAX);
    }
    ASSERT_EQ(q.size(), ref.size()) << "step " << step;
    ASSERT_EQ(q.empty(), ref.empty());
    if (!ref.empty()) {
      ASSERT_EQ(q.front(), *ref.begin()) << "step " << step;
    }
    ASSERT_LE(q.run_entries(), n);
  }
}

}  // namespace

TEST(ReadyQueueTest, OrdersLikeAnOrderedSetMostlyInOrder) { compare_with_set(1, 4096, 4, 90); }
TEST(ReadyQueueTest, OrdersLikeAnOrderedSetAtRandom) { compare_with_set(2, 512, 8, 0); }
TEST(ReadyQueueTest, OrdersLikeAnOrderedSetWithOneKey) { compare_with_set(3, 300, 1, 50); }

TEST(ReadyQueueTest, InOrderMessagesUseNoTreeNodes) {
  NodePool nodes;
  ReadyQueue q(100000, &nodes);
  for (MessageId m = 0; m < 100000; ++m) {
    q.insert(0, m);
    if (m >= 10) {  // ten in the queue at a time, taken in order
      ASSERT_EQ(q.front(), ReadyQueue::Entry(0, m - 10));
      q.erase(0, m - 10);
    }
  }
  EXPECT_EQ(q.size(), 10u);
  EXPECT_EQ(nodes.free_blocks(), 0u);  // no set node was ever allocated (and so none returned)
}

TEST(ReadyQueueTest, AnOlderMessageGoesAheadOfTheRun) {
  NodePool nodes;
  ReadyQueue q(100, &nodes);
  for (MessageId m = 10; m < 20; ++m) q.insert(0, m);
  q.insert(0, 3);  // a retransmission of an older message: message order puts it first
  EXPECT_EQ(q.front(), ReadyQueue::Entry(0, 3));
  q.erase(0, 3);
  EXPECT_EQ(q.front(), ReadyQueue::Entry(0, 10));
  q.erase(0, 15);  // erased in the middle: skipped when it reaches the front
  for (MessageId m : {10u, 11u, 12u, 13u, 14u, 16u, 17u, 18u, 19u}) {
    ASSERT_EQ(q.front(), ReadyQueue::Entry(0, m));
    q.erase(0, m);
  }
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.run_entries(), 0u);
}

TEST(ReadyQueueTest, SmallerKeysComeFirstWhateverTheRun) {
  NodePool nodes;
  ReadyQueue q(100, &nodes);
  for (MessageId m = 0; m < 5; ++m) q.insert(1000, m);  // MRDF: equal-sized messages form the run
  q.insert(200, 50);                                    // a message with less left goes first
  q.insert(5000, 60);
  EXPECT_EQ(q.front(), ReadyQueue::Entry(200, 50));
  q.erase(200, 50);
  for (MessageId m = 0; m < 5; ++m) {
    ASSERT_EQ(q.front(), ReadyQueue::Entry(1000, m));
    q.erase(1000, m);
  }
  EXPECT_EQ(q.front(), ReadyQueue::Entry(5000, 60));
}
