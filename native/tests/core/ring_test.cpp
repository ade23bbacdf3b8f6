// Ring (native/src/core/ring.hpp), the FIFO queue of the event paths and the sent-packet log: order, growth,
// shrinking after a burst, and that popping drops what an element owns at once.
#include "core/ring.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <random>

using netapprox::atp::Ring;

TEST(RingTest, KeepsFifoOrderAcrossWrapAroundAndGrowth) {
  Ring<int> r;
  std::deque<int> ref;
  std::mt19937 rng(11);
  int next = 0;
  for (int step = 0; step < 100000; ++step) {
    // Bias towards pushing for the first half, towards popping for the second: the ring grows, wraps and shrinks.
    const bool push = ref.empty() || rng() % 100 < (step < 50000 ? 60u : 40u);
    if (push) {
      r.push_back(next);
      ref.push_back(next++);
    } else {
      ASSERT_EQ(r.front(), ref.front());
      r.pop_front();
      ref.pop_front();
    }
    ASSERT_EQ(r.size(), ref.size());
    if (!ref.empty()) {
      ASSERT_EQ(r.back(), ref.back());
      ASSERT_EQ(r[ref.size() / 2], ref[ref.size() / 2]);
    }
  }
}

TEST(RingTest, SteadyStateNeedsNoNewCapacity) {
  Ring<int> r;
  for (int i = 0; i < 8; ++i) r.push_back(i);
  const size_t cap = r.capacity();
  for (int i = 0; i < 100000; ++i) {  // as many pushes as pops: the array is reused, never reallocated
    r.pop_front();
    r.push_back(i);
  }
  EXPECT_EQ(r.capacity(), cap);
  EXPECT_EQ(r.size(), 8u);
}

TEST(RingTest, ShrinksAfterABurstDrains) {
  Ring<int> r;
  for (int i = 0; i < 100000; ++i) r.push_back(i);
  EXPECT_GE(r.capacity(), 100000u);
  for (int i = 0; i < 100000; ++i) {
    ASSERT_EQ(r.front(), i);
    r.pop_front();
  }
  EXPECT_TRUE(r.empty());
  EXPECT_LE(r.capacity(), Ring<int>::kKeepCapacity);
}

TEST(RingTest, PrepareBackWritesInPlace) {
  Ring<int> r;
  r.push_back(1);
  r.prepare_back() = 2;  // not part of the queue until committed
  EXPECT_EQ(r.size(), 1u);
  r.commit_back();
  EXPECT_EQ(r.size(), 2u);
  EXPECT_EQ(r.back(), 2);
  r.prepare_back() = 3;  // abandoned: a later push overwrites the slot
  r.push_back(4);
  EXPECT_EQ(r[2], 4);
}

TEST(RingTest, PopReleasesWhatTheElementOwns) {
  Ring<std::shared_ptr<int>> r;
  auto p = std::make_shared<int>(5);
  r.push_back(p);
  EXPECT_EQ(p.use_count(), 2);
  r.pop_front();
  EXPECT_EQ(p.use_count(), 1);  // not kept alive by the slot until it is reused
  r.push_back(p);
  r.push_back(p);
  r.clear();
  EXPECT_EQ(p.use_count(), 1);
  EXPECT_TRUE(r.empty());
}
