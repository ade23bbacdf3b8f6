// A job's rate controller (native/src/core/rate_control.*) on its own: epoch length, rho_i, the TLR and class
// updates, the law's decision, and pacing.
#include "core/rate_control.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace netapprox::atp;

namespace {

constexpr TimeNs kUs = 1'000;
constexpr TimeNs kMs = 1'000'000;
constexpr double kRmax = 1.25e8;  // 1 Gbit/s

RateControlConfig config(Mode m) { return RateControlConfig{{kRmax, 0.125, 0.01}, mode_flags(m), 100 * kUs, 1472}; }

}  // namespace

TEST(RateControlTest, EpochIsOneRttAtLineRateAndSpansSixteenPacketsWhenSlow) {
  RateController base(rate_law::kLineRate, config(Mode::kBase));
  base.start(0, 0.5, 0.5);
  EXPECT_EQ(base.epoch_length(300 * kUs), 300 * kUs);
  EXPECT_EQ(base.epoch_length(10 * kUs), 100 * kUs) << "min_epoch";
  RateController full(rate_law::kPaper, config(Mode::kFull));
  full.start(0, 0.5, 0.5);  // at R_max, 16 packets take 188 us
  EXPECT_EQ(full.epoch_length(100 * kUs), 188'416u);
  EXPECT_EQ(full.epoch_length(20 * kUs), 188'416u) << "min_epoch, stretched to 16 packets";
  EXPECT_EQ(full.epoch_length(300 * kUs), 300 * kUs) << "16 packets take less than one RTT";
  for (int i = 0; i < 4; ++i) {  // rho = 1 halves the rate: R_max / 16, 16 packets take 3 ms
    full.on_resolved(false, 1000);
    full.end_epoch(TimeNs(i + 1) * 1000 * kUs, {{100, 50, 0, 0}}, 1.0, 1000 * kMs);
  }
  EXPECT_DOUBLE_EQ(full.rate(), kRmax / 16);
  EXPECT_EQ(full.epoch_length(300 * kUs), 1200 * kUs) << "at most 4 RTTs";
}

TEST(RateControlTest, EndOfEpochAppliesTheLawToResolvedPackets) {
  RateController rc(rate_law::kPaper, config(Mode::kFull));
  rc.start(0, 0.3, 0.3);
  EXPECT_EQ(rc.rate(), kRmax);
  EXPECT_EQ(rc.priority_class(), 3);
  for (int i = 0; i < 6; ++i) rc.on_resolved(true, 1000);
  for (int i = 0; i < 4; ++i) rc.on_resolved(false, 1000);  // rho = 0.4 >= TLR 0.3: eq. 3
  EpochSample e = rc.end_epoch(1000 * kUs, {{100, 70, 0, 0}}, 1.0, kMs);
  EXPECT_DOUBLE_EQ(e.loss, 0.4);
  EXPECT_DOUBLE_EQ(rc.rate(), kRmax * 0.8);
  EXPECT_DOUBLE_EQ(e.rate_bps, kRmax * 0.8 * 8);
  // A clean epoch: eq. 2; the TLR follows eq. 1 (10 lost of an allowance of 30, 50 delivered: 20/50).
  for (int i = 0; i < 10; ++i) rc.on_resolved(true, 1000);
  e = rc.end_epoch(2000 * kUs, {{100, 70, 50, 10}}, 1.0, kMs);
  EXPECT_DOUBLE_EQ(e.tlr, 0.4);
  EXPECT_DOUBLE_EQ(rc.rate(), 0.875 * kRmax * 0.8 + 0.125 * kRmax);
  EXPECT_EQ(rc.priority_class(), 4) << "the class follows the TLR in Full";
  // An epoch that resolved nothing leaves the rate alone.
  const double before = rc.rate();
  rc.end_epoch(3000 * kUs, {{100, 70, 50, 10}}, 1.0, kMs);
  EXPECT_DOUBLE_EQ(rc.rate(), before);
  EXPECT_EQ(rc.epochs(), 3u);
}

TEST(RateControlTest, PacketLevelTlrDecidesForMultiPacketMessages) {
  // TLR 0.3 with 10-packet messages is ~3.5 % packet loss: rho 0.1 is a decrease, not an increase.
  RateController rc(rate_law::kPaper, config(Mode::kFull));
  rc.start(0, 0.3, 0.3);
  for (int i = 0; i < 9; ++i) rc.on_resolved(true, 1000);
  rc.on_resolved(false, 1000);
  rc.end_epoch(1000 * kUs, {{100, 70, 0, 0}}, 10.0, kMs);
  EXPECT_DOUBLE_EQ(rc.rate(), kRmax * 0.95);
}

TEST(RateControlTest, StaticModesKeepTheirClass) {
  RateController rc(rate_law::kPaper, config(Mode::kFixPrio));
  rc.start(0, 0.5, 0.5);
  EXPECT_EQ(rc.priority_class(), 4);
  rc.on_resolved(true, 1000);
  rc.end_epoch(1000 * kUs, {{100, 50, 90, 0}}, 1.0, kMs);  // TLR now 1: Full would move to class 7
  EXPECT_EQ(rc.priority_class(), 4);
  RateController none(rate_law::kPaper, config(Mode::kRc));
  none.start(0, 0.5, 0.5);
  EXPECT_EQ(none.priority_class(), 0) << "no slack priority: everything in the default class";
  TimeNs t[kNumPriorityClasses];
  rc.time_in_class(5000 * kUs, t);
  EXPECT_EQ(t[4], 5000 * kUs);
}

TEST(RateControlTest, PacingAdvancesByBytesOverRateWithABurstAllowance) {
  RateController rc(rate_law::kPaper, config(Mode::kFull));
  rc.start(1'000'000, 0.5, 0.5);
  rc.on_sent(1'000'000, 1250);  // 1250 bytes at 125 MB/s = 10 us
  EXPECT_EQ(rc.next_send(), 1'000'000 + 10 * kUs);
  // After idling, the clock restarts at most 50 us in the past.
  rc.on_sent(2'000'000, 1250);
  EXPECT_EQ(rc.next_send(), 2'000'000 - 50 * kUs + 10 * kUs);
}

// Strict-priority queues can starve a job whose class is below a saturated one: an epoch in which every packet
// was lost moves it up one class, down to class 1 (class 0 stays exact traffic); quiet epochs move it back.
TEST(RateControlTest, StarvedEpochsClimbClassesAndQuietOnesReturn) {
  RateController rc(rate_law::kSlack, config(Mode::kFull));
  rc.start(0, 0.5, 0.5);
  ASSERT_EQ(rc.priority_class(), 4);
  TimeNs t = 0;
  auto epoch = [&](int acked, int lost) {
    for (int i = 0; i < acked; ++i) rc.on_resolved(true, 1000);
    for (int i = 0; i < lost; ++i) rc.on_resolved(false, 1000);
    t += 1000 * kUs;
    rc.end_epoch(t, {{1000, 500, 0, 0}}, 1.0, kMs);  // TLR stays 0.5
  };
  for (int k = 3; k >= 1; --k) {
    epoch(0, 4);
    EXPECT_EQ(rc.priority_class(), k);
  }
  epoch(0, 4);
  EXPECT_EQ(rc.priority_class(), 1) << "never class 0";
  epoch(1, 3);  // some progress: no further climb
  EXPECT_EQ(rc.priority_class(), 1);
  for (int i = 0; i < RateController::kBoostDecay * RateController::kMaxBoost; ++i) epoch(4, 0);
  EXPECT_EQ(rc.priority_class(), 4) << "back to the TLR's class";
}

// A TLR hovering around a threshold does not make the class flap: moving to a lower priority needs a margin.
TEST(RateControlTest, ClassMovesTowardsLowerPriorityOnlyPastAMargin) {
  RateController rc(rate_law::kSlack, config(Mode::kFull));
  rc.start(0, 0.5, 0.5);
  ASSERT_EQ(rc.priority_class(), 4);
  rc.on_resolved(true, 1000);
  rc.end_epoch(1000 * kUs, {{1000, 495, 0, 0}}, 1.0, kMs);  // TLR 0.505: class 5 by the threshold, within margin
  EXPECT_EQ(rc.priority_class(), 4);
  rc.on_resolved(true, 1000);
  rc.end_epoch(2000 * kUs, {{1000, 480, 0, 0}}, 1.0, kMs);  // TLR 0.52 > 0.5 + 1/64
  EXPECT_EQ(rc.priority_class(), 5);
  rc.on_resolved(true, 1000);
  rc.end_epoch(3000 * kUs, {{1000, 495, 0, 0}}, 1.0, kMs);  // 0.505: class 5 by the threshold, stays
  EXPECT_EQ(rc.priority_class(), 5);
  rc.on_resolved(true, 1000);
  rc.end_epoch(4000 * kUs, {{1000, 510, 0, 0}}, 1.0, kMs);  // 0.49: towards higher priority at once
  EXPECT_EQ(rc.priority_class(), 4);
}

// The law learns whether the job left its pacer idle (longer than the burst allowance) during the epoch: then what
// it delivered is what it had to send, and the slack law's bound on eq. 2 may not lower its rate.
namespace {
bool g_app_limited = false;
void record_epoch(rate_law::State&, const rate_law::Params&, const rate_law::Epoch& e) {
  g_app_limited = e.app_limited;
}
const rate_law::RateLaw kRecorder{
    "recorder", true, 1, [](rate_law::State& s, const rate_law::Params& p) { s.rate = p.r_max; }, record_epoch};
}  // namespace

TEST(RateControlTest, EpochIsAppLimitedWhenThePacerSatIdle) {
  RateController rc(kRecorder, config(Mode::kFull));
  rc.start(0, 0.5, 0.5);
  const std::vector<slack::GroupProgress> progress;
  // Backlogged: a datagram every 10 us at 125 MB/s, the clock never behind.
  for (TimeNs t = 0; t < 200 * kUs; t += 10 * kUs) rc.on_sent(t, 1250);
  rc.on_resolved(true, 1250);
  rc.end_epoch(200 * kUs, progress, 1, 100 * kUs);
  EXPECT_FALSE(g_app_limited);
  // Idle for 1 ms (nothing to send), then one datagram.
  rc.on_sent(1200 * kUs, 1250);
  rc.on_resolved(true, 1250);
  rc.end_epoch(1210 * kUs, progress, 1, 100 * kUs);
  EXPECT_TRUE(g_app_limited);
  // Idle at the end of the epoch (no send at all since the last datagram) also counts; the flag is per epoch.
  rc.on_resolved(true, 1250);
  rc.end_epoch(5000 * kUs, progress, 1, 100 * kUs);
  EXPECT_TRUE(g_app_limited);
  // The first send after the idle time marks its epoch too; the next backlogged epoch is not limited.
  for (TimeNs t = 5000 * kUs; t < 5200 * kUs; t += 10 * kUs) rc.on_sent(t, 1250);
  rc.on_resolved(true, 1250);
  rc.end_epoch(5200 * kUs, progress, 1, 100 * kUs);
  EXPECT_TRUE(g_app_limited);
  for (TimeNs t = 5200 * kUs; t < 5400 * kUs; t += 10 * kUs) rc.on_sent(t, 1250);
  rc.on_resolved(true, 1250);
  rc.end_epoch(5400 * kUs, progress, 1, 100 * kUs);
  EXPECT_FALSE(g_app_limited);
}

// Needy jobs: in Full a job whose approximate allowance is spent moves to class 0 once it needs at most
// needy_fraction of its target; the paper's mode and the static-priority ablation keep the paper's classes.
TEST(RateControlTest, NeedyJobMovesToClassZeroInFullOnly) {
  for (Mode m : {Mode::kFull, Mode::kPaper, Mode::kFixPrio}) {
    RateControlConfig c = config(m);
    c.needy_fraction = 0.75;
    RateController rc(m == Mode::kPaper ? rate_law::kPaper : rate_law::kSlack, c);
    rc.start(0, 0.25, 0.25);
    EXPECT_EQ(rc.priority_class(), 2) << mode_name(m);
    for (int i = 0; i < 10; ++i) rc.on_resolved(true, 1000);
    rc.end_epoch(1 * kMs, {{100, 75, 10, 25}}, 1.0, kMs);  // allowance spent, 65 of 75 still needed
    EXPECT_EQ(rc.priority_class(), m == Mode::kFixPrio ? 2 : 1) << mode_name(m) << ": TLR 0 is class 1";
    for (int i = 0; i < 10; ++i) rc.on_resolved(true, 1000);
    rc.end_epoch(2 * kMs, {{100, 75, 20, 25}}, 1.0, kMs);  // 55 of 75 needed: near the target
    EXPECT_EQ(rc.priority_class(), m == Mode::kFull ? 0 : (m == Mode::kFixPrio ? 2 : 1)) << mode_name(m);
    TimeNs in_class[kNumPriorityClasses];
    rc.time_in_class(3 * kMs, in_class);
    if (m == Mode::kFull) {
      EXPECT_EQ(in_class[0], 1 * kMs) << "reported as time in class 0";
    }
  }
}

// A deadline job (JobSpec::deadline) is needy as soon as its allowance is spent, whatever it still needs: it is exact
// for the rest of its planned sample, as submit=target's groups are from the start (issue 32; was: class 1, behind a
// class-0 flow, until 3/4 of its target had arrived). Without a deadline the needy fraction still decides.
TEST(RateControlTest, DeadlineJobIsNeedyOnceItsAllowanceIsSpent) {
  for (TimeNs deadline : {TimeNs{0}, 1000 * kMs}) {
    RateControlConfig c = config(Mode::kFull);
    c.needy_fraction = 0.75;
    RateController rc(rate_law::kSlack, c);
    rc.start(0, 0.25, 0.25, deadline);
    for (int i = 0; i < 10; ++i) rc.on_resolved(true, 1000);
    rc.end_epoch(1 * kMs, {{100, 75, 0, 25}}, 1.0, kMs);  // allowance spent, all 75 still needed, on schedule
    EXPECT_EQ(rc.priority_class(), deadline ? 0 : 1) << "deadline " << deadline;
    rc.end_epoch(2 * kMs, {{100, 75, 0, 24}}, 1.0, kMs);  // a late acknowledgement gave one loss back
    EXPECT_EQ(rc.priority_class(), 1) << "with allowance left the TLR's class again";
  }
}

// EngineConfig::needy_repairing_jobs_only (engine8j, off by default: refuted in the simulator, docs/protocol.md
// section 11): with it on, a job of single-segment messages (FBKV-like, 1 packet per message) out of slack near its
// target stays in its TLR's class 1, while a job of 28-packet messages (FBHD-like, repairs its losses) still goes to
// class 0. With it off (main's rule) both are needy.
TEST(RateControlTest, NeedyRepairingJobsOnlyKeepsSingleSegmentJobsInTheirClass) {
  for (bool only : {false, true}) {
    for (double ppm : {1.0, 28.0}) {
      RateControlConfig c = config(Mode::kFull);
      c.needy_fraction = 0.75;
      c.repair_after = 2;
      c.needy_repairing_only = only;
      RateController rc(rate_law::kSlack, c);
      rc.start(0, 0.25, 0.25);
      for (int i = 0; i < 10; ++i) rc.on_resolved(true, 1000);
      rc.end_epoch(1 * kMs, {{100, 75, 20, 25}}, ppm, kMs);  // allowance spent, 55 of 75 needed
      const bool repairs = ppm >= 2;
      EXPECT_EQ(rc.priority_class(), (!only || repairs) ? 0 : 1) << "only " << only << " packets/message " << ppm;
    }
  }
  EXPECT_FALSE(EngineConfig{}.needy_repairing_jobs_only) << "off by default (docs/protocol.md section 11)";
}

// Size-aware class (EngineConfig::small_job_class0_bytes, docs/protocol.md section 11 "small jobs"): in Full a job
// with allowance left (TLR 0.25: class 2) that needs at most the threshold more bytes sends in class 0, from its
// first submit or from the epoch end at which its remaining bytes fall to the threshold (the losses keep the TLR at
// 0.25); an unknown size (nothing
// submitted) or a threshold of 0 changes nothing, and the paper's mode and the static-priority ablation keep the
// paper's classes.
TEST(RateControlTest, SmallJobSendsInClassZeroInFullOnly) {
  constexpr uint64_t kThreshold = 64 * 1024;
  for (Mode m : {Mode::kFull, Mode::kPaper, Mode::kFixPrio}) {
    RateControlConfig c = config(m);
    c.small_class0_bytes = kThreshold;
    RateController rc(m == Mode::kPaper ? rate_law::kPaper : rate_law::kSlack, c);
    rc.start(0, 0.25, 0.25);
    ASSERT_EQ(rc.priority_class(), 2) << mode_name(m);
    rc.on_size_known(0, kThreshold + 1);  // a large first estimate: stays
    EXPECT_EQ(rc.priority_class(), 2) << mode_name(m);
    for (int i = 0; i < 10; ++i) rc.on_resolved(true, 1000);
    rc.end_epoch(1 * kMs, {{1000, 750, 100, 25}}, 1.0, kMs, RateController::kUnknownBytes);
    EXPECT_EQ(rc.priority_class(), 2) << mode_name(m) << ": unknown size";
    for (int i = 0; i < 10; ++i) rc.on_resolved(true, 1000);
    rc.end_epoch(2 * kMs, {{1000, 750, 200, 50}}, 1.0, kMs, kThreshold + 1);
    EXPECT_EQ(rc.priority_class(), 2) << mode_name(m) << ": one byte above the threshold";
    for (int i = 0; i < 10; ++i) rc.on_resolved(true, 1000);
    rc.end_epoch(3 * kMs, {{1000, 750, 300, 75}}, 1.0, kMs, kThreshold);  // allowance left, but small now
    EXPECT_EQ(rc.priority_class(), m == Mode::kFull ? 0 : 2) << mode_name(m);
    TimeNs in_class[kNumPriorityClasses];
    rc.time_in_class(4 * kMs, in_class);
    if (m == Mode::kFull) EXPECT_EQ(in_class[0], 1 * kMs) << "reported as time in class 0";
  }
  // At the first submit: class 0 before the first window goes out; threshold 0 is off.
  for (uint64_t threshold : {uint64_t{0}, kThreshold}) {
    RateControlConfig c = config(Mode::kFull);
    c.small_class0_bytes = threshold;
    RateController rc(rate_law::kSlack, c);
    rc.start(0, 0.25, 0.25);
    rc.on_size_known(0, 1000);
    EXPECT_EQ(rc.priority_class(), threshold ? 0 : 2) << "threshold " << threshold;
  }
}

// Size classes (EngineConfig::size_classes, Full only): the class follows the job's remaining needed bytes through
// the size bounds - class 7 before the size is known, the class of the first estimate at the first submit, higher as
// the remaining bytes fall at epoch ends - and never class 0 (the needy and small-job rules are off with it: class 0
// stays exact traffic), while the starvation guard still lifts a starved job. Paper mode and FixPrio keep the TLR's
// class whatever the setting.
TEST(RateControlTest, SizeClassesFollowTheRemainingBytesInFullOnly) {
  for (Mode m : {Mode::kFull, Mode::kPaper, Mode::kFixPrio}) {
    RateControlConfig c = config(m);
    c.size_classes = true;
    c.size_bounds = {1000, 2000, 4000, 8000, 16000, 32000};
    c.needy_fraction = 1;            // would send a job out of allowance to class 0
    c.small_class0_bytes = 1 << 20;  // would send every job here to class 0
    RateController rc(m == Mode::kPaper ? rate_law::kPaper : rate_law::kSlack, c);
    rc.start(0, 0.25, 0.25);
    const bool by_size = m == Mode::kFull;
    EXPECT_EQ(rc.priority_class(), by_size ? 7 : 2) << mode_name(m) << ": size unknown";
    rc.on_size_known(0, 20000);
    EXPECT_EQ(rc.priority_class(), by_size ? 6 : 2) << mode_name(m);
    for (int i = 0; i < 10; ++i) rc.on_resolved(true, 1000);
    rc.end_epoch(1 * kMs, {{100, 75, 60, 25}}, 1.0, kMs, 3000);  // allowance spent, 15 of 75 still needed
    // Paper mode: the TLR's class (allowance spent: class 1); FixPrio keeps its first class.
    EXPECT_EQ(rc.priority_class(), by_size ? 3 : (m == Mode::kPaper ? 1 : 2)) << mode_name(m);
  }
  // Between epoch ends the class follows every change of the remaining bytes (acknowledgements, submits).
  {
    RateControlConfig c = config(Mode::kFull);
    c.size_bounds = {1000, 2000, 4000, 8000, 16000, 32000};
    for (bool on : {false, true}) {
      c.size_classes = on;
      RateController rc(rate_law::kSlack, c);
      rc.start(0, 0.25, 0.25);
      rc.on_size_known(0, 20000);
      rc.on_remaining(10 * kUs, 3000);
      EXPECT_EQ(rc.priority_class(), on ? 3 : 2) << (on ? "size classes" : "TLR classes: unchanged");
    }
  }
  // The starvation guard: an epoch with every packet lost lifts the job one class above its size class.
  RateControlConfig c = config(Mode::kFull);
  c.size_classes = true;
  c.size_bounds = {1000, 2000, 4000, 8000, 16000, 32000};
  RateController rc(rate_law::kSlack, c);
  rc.start(0, 0.25, 0.25);
  rc.on_size_known(0, 20000);
  for (int i = 0; i < 4; ++i) rc.on_resolved(false, 1000);
  rc.end_epoch(1 * kMs, {{100, 75, 0, 0}}, 1.0, kMs, 20000);
  EXPECT_EQ(rc.priority_class(), 5);
  TimeNs in_class[kNumPriorityClasses];
  rc.time_in_class(2 * kMs, in_class);
  EXPECT_EQ(in_class[0], 0u) << "never in class 0";
  EXPECT_EQ(in_class[6], 1 * kMs);
}
