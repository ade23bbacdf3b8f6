// SlabArena (native/src/core/slab_arena.hpp), the send copies of small messages: copies stay intact while other
// copies come and go, one slab serves hundreds of small messages, slabs are reused, and spare ones are bounded.
#include "core/slab_arena.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <vector>

using netapprox::atp::SlabArena;

namespace {
struct Copy {
  const uint8_t* p;
  uint32_t slab;
  std::vector<uint8_t> want;
};
}  // namespace

TEST(SlabArenaTest, CopiesStayIntactWhileOthersAreReleasedInAnyOrder) {
  SlabArena a;
  std::mt19937 rng(5);
  std::vector<Copy> live;
  for (int step = 0; step < 40000; ++step) {
    if (live.empty() || rng() % 100 < 55) {
      std::vector<uint8_t> d(rng() % (SlabArena::kMaxCopy + 1));
      for (auto& b : d) b = static_cast<uint8_t>(rng());
      Copy c{nullptr, 0, d};
      c.p = a.copy(d.data(), static_cast<uint32_t>(d.size()), &c.slab);
      live.push_back(std::move(c));
    } else {
      const size_t i = rng() % live.size();
      ASSERT_TRUE(std::equal(live[i].want.begin(), live[i].want.end(), live[i].p)) << "step " << step;
      a.release(live[i].slab);
      live[i] = std::move(live.back());
      live.pop_back();
    }
  }
  for (const Copy& c : live) ASSERT_TRUE(std::equal(c.want.begin(), c.want.end(), c.p));
}

TEST(SlabArenaTest, OneSlabHoldsHundredsOfSmallMessagesAndIsReused) {
  SlabArena a;
  std::deque<uint32_t> slabs;  // in flight, released in order as acknowledgements do
  const uint8_t msg[100] = {1};
  for (int i = 0; i < 300000; ++i) {
    uint32_t s;
    a.copy(msg, sizeof msg, &s);
    slabs.push_back(s);
    if (slabs.size() > 10000) {  // 10 000 messages in flight: about 16 slabs of 64 KiB
      a.release(slabs.front());
      slabs.pop_front();
    }
  }
  // 300 000 messages from a handful of slabs: the window's worth plus the slab being filled and a spare or two.
  EXPECT_LE(a.slabs_allocated(), 10000 * 104 / SlabArena::kSlabBytes + 3);
  while (!slabs.empty()) {
    a.release(slabs.front());
    slabs.pop_front();
  }
  EXPECT_LE(a.spare_slabs(), SlabArena::kMaxSpareSlabs);
}

TEST(SlabArenaTest, SpareSlabsAreBoundedAfterABurst) {
  SlabArena a;
  std::vector<uint32_t> slabs;
  const uint8_t msg[2000] = {};
  for (int i = 0; i < 3200; ++i) {  // 100 slabs' worth at once
    uint32_t s;
    a.copy(msg, sizeof msg, &s);
    slabs.push_back(s);
  }
  EXPECT_GE(a.slabs_allocated(), 97u);
  for (uint32_t s : slabs) a.release(s);
  // All but the slab being filled and kMaxSpareSlabs spares went back to the allocator.
  EXPECT_LE(a.slabs_allocated(), SlabArena::kMaxSpareSlabs + 1);
  EXPECT_EQ(a.spare_slabs(), SlabArena::kMaxSpareSlabs);
}
