// The engine's deadline cache (Engine::next_timeout keeps each session's deadlines in ordered sets and recomputes
// only the sessions touched since the last call; on_timeout and poll_transmit visit only sessions with something
// due): with hundreds of sessions over a lossy, reordering link, after every step of the simulation the cached
// value equals the full scan over every session (next_timeout_reference, what next_timeout computed before), and
// every job completes.
#include "many_sessions.hpp"

#include <gtest/gtest.h>

using namespace netapprox::atp;

namespace {

void expect_same_timeouts(const many::Layout& l) {
  many::ManySessions sim(l);
  uint64_t compared = 0, mismatches = 0;
  sim.after_step = [&] {
    for (Engine* e : {&sim.a(), &sim.b()}) {
      const TimeNs cached = e->next_timeout(), scanned = e->next_timeout_reference();
      ++compared;
      if (cached != scanned) {
        if (++mismatches <= 5)
          ADD_FAILURE() << "step " << sim.steps() << " at " << sim.now() << ": cached " << cached << " scan "
                        << scanned;
      }
    }
  };
  EXPECT_TRUE(sim.run(20'000'000'000ULL)) << sim.jobs_done() << " of " << l.sessions << " jobs finished";
  EXPECT_EQ(mismatches, 0u) << "of " << compared << " comparisons";
  EXPECT_GT(compared, 1000u);
}

}  // namespace

TEST(ManySessionsTest, CachedTimeoutsEqualTheFullScanOverHundredsOfSessions) {
  many::Layout l;
  l.sessions = 300;
  l.messages = 20;
  expect_same_timeouts(l);
}

TEST(ManySessionsTest, CachedTimeoutsEqualTheFullScanUnderHeavyLossSeeds) {
  for (uint64_t seed = 2; seed <= 4; ++seed) {
    many::Layout l;
    l.sessions = 60;
    l.messages = 30;
    l.loss = 0.1;
    l.seed = seed;
    SCOPED_TRACE(seed);
    expect_same_timeouts(l);
  }
}
