// MRDF across sessions (docs/protocol.md section 6): when jobs in different sessions compete for the host's line
// rate (the host pacer), the modes with MRDF serve the job with the least remaining data first; Base and RC keep
// round-robin over sessions. On the simulated fabric (fabric.hpp), one sender with one session per job (the lab's
// layout), the port 10x faster than the host so that the host pacer, not the network, is what limits the jobs.
// Deterministic: no random loss, fake clock.
#include <gtest/gtest.h>

#include <map>

#include "fabric.hpp"

using namespace netapprox::atp;

namespace {
constexpr TimeNs kMs = 1'000'000;

struct Outcome {
  std::map<JobId, std::shared_ptr<const JobReport>> reports;
  std::vector<JobId> order;  // completion order
  double jct_ms(JobId j) const { return double(reports.at(j)->finished - reports.at(j)->started) / 1e6; }
};

// One sender behind a 200 Mbit/s host pacer, the port 10x faster, no slack queues, no peer-death timeout in reach.
fabric::Config one_sender(Mode mode, bool across) {
  fabric::Config c;
  c.senders = 1;
  c.host_rate_bps = 200e6;
  c.port_rate_bps = 2e9;
  c.host_delay = 25'000;
  c.slack_queues = false;
  c.engine.line_rate_bps = 200'000'000;
  c.engine.mode = mode;
  c.engine.mrdf_across_jobs = across;
  c.engine.peer_death_timeout = 20'000'000'000ULL;
  return c;
}

// A long job (kLong messages) starts; `delay` later a short one (kShort messages) starts in another session of the
// same sender. Both MSR `msr`, 1000-byte messages. `with_long` false: the short job alone.
constexpr uint32_t kLong = 2000, kShort = 200;
Outcome run(Mode mode, bool across, bool with_long = true, double msr = 1.0, TimeNs delay = 2 * kMs) {
  fabric::Fabric f(one_sender(mode, across), 3);
  Outcome out;
  f.on_sender_event = [&](int, Event& e) {
    if (e.type != EventType::kJobDone) return;
    out.reports[e.job] = e.report;
    out.order.push_back(e.job);
  };
  std::vector<uint8_t> payload(1000, 7);
  auto start = [&](JobId id, uint32_t n) {
    const SessionId sid = 0x7000'0000 + id;
    ASSERT_EQ(f.open_extra_session(0, sid), Status::kOk);
    ASSERT_EQ(f.sender(0).start_job(sid, JobSpec{id, {{id, n, msr}}, true}, f.now()), Status::kOk);
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_EQ(f.sender(0).submit(sid, id, 0, i, payload.data(), payload.size(), f.now()), Status::kOk);
  };
  if (with_long) start(1, kLong);
  f.run([] { return false; }, f.now() + delay);
  start(2, kShort);
  const size_t jobs = with_long ? 2 : 1;
  EXPECT_TRUE(f.run([&] { return out.reports.size() == jobs; }, f.now() + 60'000 * kMs)) << mode_name(mode);
  for (const auto& [id, r] : out.reports) EXPECT_EQ(r->status, Status::kOk) << mode_name(mode) << " job " << id;
  return out;
}
}  // namespace

// The short job, started 2 ms after the long one in a session of its own, takes the host's line rate and finishes
// first, about as fast as alone; the long job still completes. Without MRDF across sessions (mrdf_across_jobs off,
// the round-robin before this change) the two share the line and the short job takes about twice as long.
TEST(MrdfAcrossSessionsTest, ShortJobFirstLongJobStillCompletes) {
  for (Mode mode : {Mode::kFull, Mode::kRcMrdf, Mode::kPaper}) {
    SCOPED_TRACE(mode_name(mode));
    const Outcome alone = run(mode, true, false);
    const Outcome on = run(mode, true);
    const Outcome off = run(mode, false);
    ASSERT_EQ(on.order.size(), 2u);
    EXPECT_EQ(on.order.front(), 2u) << "the short job finishes first";
    EXPECT_EQ(on.reports.at(1)->delivered, kLong) << "exact: every message of the long job";
    EXPECT_EQ(on.reports.at(2)->delivered, kShort);
    // Alone the short job takes ~8.6 ms (200 x 1076 wire bytes at 200 Mbit/s, plus the RTTs).
    EXPECT_LT(on.jct_ms(2), 1.25 * alone.jct_ms(2)) << "alone " << alone.jct_ms(2);
    EXPECT_GT(off.jct_ms(2), 1.6 * alone.jct_ms(2)) << "round-robin shares the line: the scenario shows the change";
    // The long job loses no more than the time the short one took (work conserving).
    EXPECT_LT(on.jct_ms(1), off.jct_ms(1) + 1.25 * alone.jct_ms(2));
  }
}

// Base and RC have no MRDF: the setting changes nothing, the two sessions share the host round-robin.
TEST(MrdfAcrossSessionsTest, BaseAndRcKeepRoundRobin) {
  for (Mode mode : {Mode::kBase, Mode::kRc}) {
    SCOPED_TRACE(mode_name(mode));
    const Outcome alone = run(mode, true, false);
    const Outcome on = run(mode, true);
    const Outcome off = run(mode, false);
    EXPECT_EQ(on.reports.at(1)->finished, off.reports.at(1)->finished);
    EXPECT_EQ(on.reports.at(2)->finished, off.reports.at(2)->finished);
    EXPECT_GT(on.jct_ms(2), 1.6 * alone.jct_ms(2)) << "alone " << alone.jct_ms(2);
  }
}

// Approximate jobs: the order is by what a job still needs to reach its target. The long job at MSR 0.5 still needs
// 1000 messages, the short one 100: the short one goes first, and both meet their targets.
TEST(MrdfAcrossSessionsTest, ApproximateJobsOrderedByWhatTheyStillNeed) {
  const Outcome alone = run(Mode::kFull, true, false, 0.5);
  const Outcome on = run(Mode::kFull, true, true, 0.5);
  const Outcome off = run(Mode::kFull, false, true, 0.5);
  ASSERT_EQ(on.order.size(), 2u);
  EXPECT_EQ(on.order.front(), 2u);
  EXPECT_GE(on.reports.at(1)->delivered, kLong / 2);
  EXPECT_GE(on.reports.at(2)->delivered, kShort / 2);
  // Not quite as fast as alone: the long job's packets already in flight are resolved first (its acks, losses).
  EXPECT_LT(on.jct_ms(2), 1.4 * alone.jct_ms(2)) << "alone " << alone.jct_ms(2);
  EXPECT_GT(off.jct_ms(2), 1.6 * alone.jct_ms(2)) << "alone " << alone.jct_ms(2);
}

// The starvation guard: a long job behind a stream of short jobs (always two of them live, each in a session of its
// own, so there is always a job with less remaining data) still sends. Each sending job that has waited 8 of its
// srtt without a DATA packet is served first, so the long job has acknowledged packets in every 20 ms of the
// stream, and it completes once the stream ends.
TEST(MrdfAcrossSessionsTest, LongJobProgressesBehindAStreamOfShortJobs) {
  fabric::Fabric f(one_sender(Mode::kFull, true), 5);
  f.sender(0).set_trace_epochs(true);
  constexpr TimeNs kStream = 200 * kMs, kBin = 20 * kMs;
  std::vector<uint64_t> long_acked(kStream / kBin, 0);
  std::shared_ptr<const JobReport> long_report;
  int live_short = 0, short_done = 0;
  const TimeNs t0 = f.now();
  f.on_sender_event = [&](int, Event& e) {
    if (e.type == EventType::kEpoch && e.job == 1 && e.epoch.at >= t0 && e.epoch.at < t0 + kStream)
      long_acked[(e.epoch.at - t0) / kBin] += e.epoch.acked;
    if (e.type != EventType::kJobDone) return;
    EXPECT_EQ(e.report->status, Status::kOk) << "job " << e.job;
    if (e.job == 1) {
      long_report = e.report;
    } else {
      live_short--;
      short_done++;
    }
  };
  std::vector<uint8_t> payload(1000, 7);
  auto start = [&](JobId id, uint32_t n) {
    const SessionId sid = 0x7000'0000 + id;
    ASSERT_EQ(f.open_extra_session(0, sid), Status::kOk);
    ASSERT_EQ(f.sender(0).start_job(sid, JobSpec{id, {{id, n, 1.0}}, true}, f.now()), Status::kOk);
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_EQ(f.sender(0).submit(sid, id, 0, i, payload.data(), payload.size(), f.now()), Status::kOk);
  };
  start(1, 4000);
  JobId next = 2;
  while (f.now() < t0 + kStream) {
    while (live_short < 2) {
      start(next++, 50);
      live_short++;
    }
    f.run([&] { return live_short < 2; }, t0 + kStream);
  }
  EXPECT_GT(short_done, 20) << "the stream kept the line busy with short jobs";
  // With the guard 3-14 packets per bin (1 per 8 srtt; the long job's srtt grows as it sends rarely); without it
  // (kMrdfStarveRtts set huge) 1 in the first bin and 0 in all others.
  for (size_t b = 0; b < long_acked.size(); ++b) EXPECT_GE(long_acked[b], 2u) << "bin " << b;
  ASSERT_TRUE(f.run([&] { return long_report != nullptr; }, f.now() + 60'000 * kMs));
  EXPECT_EQ(long_report->delivered, 4000u);
}
