// The scheduler across sessions and jobs (native/src/core/scheduler.*) on its own: the job orders within a session,
// MRDF's DATA slot across sessions with its starvation guard, the round-robin order, and the class a DATA packet is
// marked with. The engine-level behaviour (who actually sends first on a shared line) is MrdfAcrossSessionsTest.
#include "core/scheduler.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "core/send_job.hpp"

using namespace netapprox::atp;
using namespace netapprox::atp::scheduler;

namespace {

constexpr TimeNs kMs = 1'000'000;

JobRank rank(uint64_t remaining, TimeNs next_send, TimeNs starve = kNever) {
  return JobRank{remaining, next_send, starve};
}

// The index the session's job loop (Engine's transmit_from) ends with: the first job no later one goes before.
size_t first_in(JobOrder order, const std::vector<JobRank>& jobs) {
  size_t best = 0;
  for (size_t i = 1; i < jobs.size(); ++i)
    if (goes_before(order, jobs[i], jobs[best])) best = i;
  return best;
}

}  // namespace

TEST(SchedulerTest, StarvationCountsFromTheLastDataPacketOrTheStart) {
  EXPECT_EQ(starve_at(10 * kMs, kNever, 2 * kMs), 10 * kMs + kMrdfStarveRtts * 2 * kMs) << "never sent: from start";
  EXPECT_EQ(starve_at(10 * kMs, 30 * kMs, 2 * kMs), 30 * kMs + kMrdfStarveRtts * 2 * kMs);
  EXPECT_EQ(starve_at(10 * kMs, 30 * kMs, 0), 30 * kMs);
}

TEST(SchedulerTest, RankOfAJobIsItsRemainingBytesPacingTimeAndStarvation) {
  uint64_t buffered = 0;
  RateControlConfig rc{{1.25e8, 0.125, 0.01}, mode_flags(Mode::kFull), 100'000, 1472};
  SendJob j(JobSpec{3, {{1, 10, 0.5}}, true}, true, 1000, rate_law::kPaper, rc, buffered);
  j.started = 5 * kMs;
  std::vector<uint8_t> msg(400, 1);
  ASSERT_EQ(j.submit(0, 0, msg.data(), msg.size(), 1 << 30), Status::kOk);
  const JobRank r = rank_of(j, 1 * kMs);
  EXPECT_EQ(r.remaining_bytes, j.remaining_bytes());
  EXPECT_EQ(r.remaining_bytes, 5u * 400) << "target 5 of 10 messages, 400 bytes each so far";
  EXPECT_EQ(r.next_send, j.rate.next_send());
  EXPECT_EQ(r.starve_at, 5 * kMs + kMrdfStarveRtts * kMs) << "no DATA sent yet: counted from its start";
  j.last_data_sent = 7 * kMs;
  EXPECT_EQ(rank_of(j, 1 * kMs).starve_at, 7 * kMs + kMrdfStarveRtts * kMs);
}

TEST(SchedulerTest, JobOrderFollowsTheModeAndTheSessionsStarvation) {
  EXPECT_EQ(job_order(false, false), JobOrder::kPacing);
  EXPECT_EQ(job_order(false, true), JobOrder::kPacing) << "no starvation guard without MRDF across sessions";
  EXPECT_EQ(job_order(true, false), JobOrder::kMrdf);
  EXPECT_EQ(job_order(true, true), JobOrder::kLongestWaiting);
}

TEST(SchedulerTest, PacingOrderTakesTheEarliestOwnPacingTime) {
  const std::vector<JobRank> jobs = {rank(10, 30), rank(9000, 20), rank(1, 25)};
  EXPECT_EQ(first_in(JobOrder::kPacing, jobs), 1u) << "remaining bytes do not matter";
  EXPECT_EQ(first_in(JobOrder::kPacing, {rank(5, 20), rank(1, 20)}), 0u) << "ties keep the first";
}

TEST(SchedulerTest, MrdfOrderTakesTheLeastRemainingDataThenThePacingTime) {
  EXPECT_EQ(first_in(JobOrder::kMrdf, {rank(300, 10), rank(100, 50), rank(200, 0)}), 1u);
  EXPECT_EQ(first_in(JobOrder::kMrdf, {rank(100, 50), rank(100, 40), rank(100, 45)}), 1u) << "equal: pacing time";
  EXPECT_EQ(first_in(JobOrder::kMrdf, {rank(100, 40), rank(100, 40)}), 0u) << "full tie keeps the first";
}

TEST(SchedulerTest, LongestWaitingOrderTakesTheEarliestStarvation) {
  EXPECT_EQ(first_in(JobOrder::kLongestWaiting, {rank(1, 0, 90), rank(900, 50, 30), rank(5, 0, 60)}), 1u)
      << "the longest-waiting job, however much it still needs";
}

TEST(SchedulerTest, SessionRankIsTheLeastKeyAndTheEarliestStarvationOfItsJobs) {
  SessionRank r;
  EXPECT_EQ(r.key, UINT64_MAX);
  EXPECT_EQ(r.starve_at, kNever);
  r.add(rank(500, 0, 40));
  r.add(rank(200, 0, 90));
  r.add(rank(800, 0, 10));
  EXPECT_EQ(r.key, 200u);
  EXPECT_EQ(r.starve_at, 10u) << "from different jobs: each is the session's best of its kind";
}

TEST(SchedulerTest, DataSlotGoesToTheLeastRemainingDataAcrossSessions) {
  DataSlotChoice c(100);
  EXPECT_FALSE(c.chosen());
  c.offer(7, SessionRank{5000, 1000});
  c.offer(3, SessionRank{800, 1000});
  c.offer(9, SessionRank{1200, 1000});
  ASSERT_TRUE(c.chosen());
  EXPECT_EQ(c.session(), 3u);
  EXPECT_FALSE(c.starving());
  EXPECT_EQ(c.candidates(), 3u);
}

TEST(SchedulerTest, DataSlotTiesGoToTheLowestSessionId) {
  DataSlotChoice c(100);
  c.offer(9, SessionRank{800, 1000});
  c.offer(4, SessionRank{800, 1000});
  c.offer(6, SessionRank{800, 1000});
  EXPECT_EQ(c.session(), 4u);
}

TEST(SchedulerTest, AStarvingSessionGoesFirstTheLongestWaitingFirst) {
  DataSlotChoice c(100);
  c.offer(1, SessionRank{10, 1000});    // the least data, not starving
  c.offer(2, SessionRank{90000, 80});   // starving since 80
  c.offer(3, SessionRank{50000, 100});  // starving since now (starve_at <= now)
  c.offer(4, SessionRank{5, 101});      // not yet
  c.offer(5, SessionRank{70000, 80});   // starving since 80 too: the lower id wins
  EXPECT_EQ(c.session(), 2u);
  EXPECT_TRUE(c.starving());
  EXPECT_EQ(c.candidates(), 5u);
  DataSlotChoice late(100);
  late.offer(8, SessionRank{90000, 50});
  late.offer(2, SessionRank{10, 2000});
  EXPECT_EQ(late.session(), 8u) << "a later non-starving session does not displace a starving one";
}

TEST(SchedulerTest, RoundRobinTakesTheNextIdAfterTheCursorAndWraps) {
  const std::vector<SessionId> due = {40, 10, 30, 20};
  EXPECT_EQ(due[round_robin_pick(due, 0)], 10u);
  EXPECT_EQ(due[round_robin_pick(due, 10)], 20u);
  EXPECT_EQ(due[round_robin_pick(due, 25)], 30u);
  EXPECT_EQ(due[round_robin_pick(due, 40)], 10u) << "after the largest: wraps to the smallest";
  EXPECT_EQ(due[round_robin_pick(due, 99)], 10u);
  const std::vector<SessionId> twice = {30, 20, 30};  // a session listed in both deadline sets
  EXPECT_EQ(twice[round_robin_pick(twice, 20)], 30u);
  EXPECT_EQ(round_robin_pick({5}, 5), 0u);
}

TEST(SchedulerTest, DataClassMarking) {
  EngineConfig cfg;
  cfg.no_priority_dscp = 3;
  EXPECT_EQ(data_dscp(cfg, false, 4, false), 3) << "no slack priority: every DATA packet unmarked";
  EXPECT_EQ(data_dscp(cfg, false, 4, true), 3);
  EXPECT_EQ(data_dscp(cfg, true, 4, true), cfg.dscp_by_class[0]) << "exact groups: class 0";
  EXPECT_EQ(data_dscp(cfg, true, 4, false), cfg.dscp_by_class[4]) << "approximate: the job's class";
  EXPECT_EQ(data_dscp(cfg, true, 2, false, true), cfg.dscp_by_class[kNumPriorityClasses - 1])
      << "beyond the planned sample: the lowest class";
  EXPECT_EQ(data_dscp(cfg, true, 2, true, true), cfg.dscp_by_class[0]) << "an exact message is never an extra";
  EXPECT_EQ(control_dscp(cfg), cfg.dscp_by_class[0]);
}
