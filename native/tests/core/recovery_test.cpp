// Loss recovery (native/src/core/recovery.*) on its own: the RTT estimator, acknowledgement processing, the ways
// a packet is declared lost (packet threshold, time threshold, unanswered probes), late acknowledgements of
// packets declared lost, and the probe timeout's backoff.
#include "core/recovery.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace netapprox::atp;

namespace {

constexpr TimeNs kUs = 1'000;
constexpr TimeNs kMs = 1'000'000;

struct Recorder final : PacketFate {
  std::vector<MessageId> acked, lost, late;  // DATA packets by message id (tests use one packet per message)
  void on_acked(const SentPacket& p) override { acked.push_back(p.msg); }
  void on_lost(const SentPacket& p) override { lost.push_back(p.msg); }
  void on_late_ack(const SentPacket& p) override { late.push_back(p.msg); }
};

SentPacket data(MessageId m, uint32_t bytes = 1000) {
  SentPacket p;
  p.kind = SentPacket::Kind::kData;
  p.bytes = bytes;
  p.msg = m;
  return p;
}

wire::Ack ack(std::vector<wire::AckRange> ranges, uint32_t delay_us = 0) {
  wire::Ack a;
  a.largest = ranges.front().high;
  a.ack_delay_us = delay_us;
  a.window = 1 << 20;
  a.ranges = std::move(ranges);
  return a;
}

}  // namespace

TEST(RttEstimatorTest, FollowsRfc9002) {
  RttEstimator r;
  EXPECT_EQ(r.smoothed(7), 7u);
  r.on_sample(100 * kUs, 0);
  EXPECT_EQ(r.srtt, 100 * kUs);
  EXPECT_EQ(r.rttvar, 50 * kUs);
  EXPECT_EQ(r.min_rtt, 100 * kUs);
  r.on_sample(200 * kUs, 0);
  EXPECT_EQ(r.srtt, (7 * 100 * kUs + 200 * kUs) / 8);
  EXPECT_EQ(r.rttvar, (3 * 50 * kUs + 100 * kUs) / 4);
  // The peer's ack delay is subtracted only while the sample stays at or above min_rtt.
  const TimeNs before = r.srtt;
  r.on_sample(150 * kUs, 40 * kUs);  // 150 >= 100 + 40: counts as 110
  EXPECT_EQ(r.srtt, (7 * before + 110 * kUs) / 8);
  EXPECT_EQ(r.latest, 150 * kUs);
}

TEST(RecoveryTest, AcknowledgedPacketsResolveOnceAndGiveAnRttSample) {
  Recovery rec(kMs, 200 * kUs);
  Recorder f;
  for (MessageId m = 0; m < 4; ++m) rec.on_sent(data(m), m * 10 * kUs);
  EXPECT_EQ(rec.next_pn(), 4u);
  EXPECT_EQ(rec.inflight_bytes(), 4000u);
  EXPECT_EQ(rec.srtt(), kMs) << "initial_rtt before the first sample";
  rec.on_ack(ack({{0, 1}}), 130 * kUs, f);
  EXPECT_EQ(f.acked, (std::vector<MessageId>{0, 1}));
  EXPECT_TRUE(f.lost.empty());
  EXPECT_EQ(rec.rtt().latest, 120 * kUs) << "sample from the largest acknowledged packet (sent at 10 us)";
  EXPECT_EQ(rec.inflight_bytes(), 2000u);
  EXPECT_EQ(rec.logged(), 2u) << "resolved packets leave the front of the log";
  rec.on_ack(ack({{0, 1}}), 140 * kUs, f);  // a repeated ACK changes nothing
  EXPECT_EQ(f.acked.size(), 2u);
  rec.on_ack(ack({{9, 9}}), 150 * kUs, f);  // acknowledges a number never sent: ignored
  EXPECT_EQ(f.acked.size(), 2u);
}

// Many later packets acknowledged do not make a packet lost by themselves: only its age does (RACK). Was: three
// later acknowledged packets declared it lost, so jitter of a few packet times meant spurious losses.
TEST(RecoveryTest, ReorderingWithinTheTimeWindowIsNotLoss) {
  Recovery rec(kMs, 0);
  Recorder f;
  for (MessageId m = 0; m < 20; ++m) rec.on_sent(data(m), m * 100);  // a burst: 100 ns apart
  rec.on_ack(ack({{1, 19}}), 100 * kUs, f);  // packet 0 is 19 numbers behind, but sent only 100 us ago
  EXPECT_TRUE(f.lost.empty());
  EXPECT_EQ(rec.loss_timer(), rec.time_threshold());
  rec.on_ack(ack({{0, 19}}), 105 * kUs, f);  // it was only reordered
  EXPECT_EQ(f.acked.size(), 20u);
  EXPECT_TRUE(f.lost.empty());
}

TEST(RecoveryTest, TimeThresholdDeclaresLossBehindTheLargestAcknowledged) {
  Recovery rec(kMs, 0);
  Recorder f;
  rec.on_sent(data(0), 0);
  rec.on_sent(data(1), 0);
  rec.on_ack(ack({{1, 1}}), 100 * kUs, f);  // RTT 100 us; packet 0 is behind, sent 100 us ago < 9/8 RTT
  EXPECT_TRUE(f.lost.empty());
  EXPECT_EQ(rec.loss_timer(), 112'500u) << "9/8 * 100 us after packet 0 was sent";
  rec.detect_losses(112 * kUs, f);
  EXPECT_TRUE(f.lost.empty());
  rec.detect_losses(113 * kUs, f);
  EXPECT_EQ(f.lost, (std::vector<MessageId>{0}));
}

// Was: the first probe timeout declared everything in flight lost, before any RTT sample too, so on a path longer
// than 2 * initial_rtt the first packets were always "lost".
TEST(RecoveryTest, ProbeTimeoutsBackOffAndDeclareNothingBeforeTheFirstSample) {
  Recovery rec(kMs, 200 * kUs);
  Recorder f;
  rec.on_sent(data(0), 0);
  // Before any sample: PTO = 2 * initial_rtt + ack_delay, doubled after each unanswered probe.
  EXPECT_EQ(rec.pto(), 2200 * kUs);
  TimeNs expect = 2200 * kUs;
  for (uint32_t k = 0; k < 8; ++k) {
    ASSERT_EQ(rec.probe_deadline(), expect) << k;
    rec.on_probe_timeout(expect, f);
    EXPECT_TRUE(f.lost.empty()) << "no RTT sample yet: a probe timeout declares nothing";
    EXPECT_EQ(rec.probes(), k + 1);
    expect += std::min<TimeNs>(2200 * kUs << (k + 1), Recovery::kMaxProbeInterval);
  }
  // The path turns out to be 500 ms long: the late acknowledgement still gives the sample and resets the backoff.
  rec.on_ack(ack({{0, 0}}), 500 * kMs, f);
  EXPECT_EQ(f.acked, (std::vector<MessageId>{0}));
  EXPECT_EQ(rec.rtt().latest, 500 * kMs);
  EXPECT_EQ(rec.probes(), 0u);
  EXPECT_EQ(rec.probe_deadline(), kNever) << "nothing in flight";
}

TEST(RecoveryTest, OnlyASecondUnansweredProbeDeclaresLoss) {
  Recovery rec(kMs, 0);
  Recorder f;
  rec.on_sent(data(0), 0);
  rec.on_ack(ack({{0, 0}}), 100 * kUs, f);  // sample: srtt 100 us, PTO = 100 us + 1 ms floor
  rec.on_sent(data(1), 200 * kUs);
  rec.on_sent(data(2), 300 * kUs);
  const TimeNs first = rec.probe_deadline();
  EXPECT_EQ(first, 200 * kUs + rec.pto());
  rec.on_probe_timeout(first, f);
  EXPECT_TRUE(f.lost.empty()) << "the first timeout only probes";
  rec.on_sent(data(3), first + 10 * kUs);  // e.g. new data after the probe
  const TimeNs second = rec.probe_deadline();
  EXPECT_EQ(second, first + 2 * rec.pto());
  rec.on_probe_timeout(second, f);
  EXPECT_EQ(f.lost, (std::vector<MessageId>{1, 2})) << "what was sent before the first probe";
}

// A packet declared lost that is acknowledged later: the caller hears of it once (on_late_ack), the RTT sample is
// taken, and the reordering window widens (RTT / 8, doubled per spurious loss, up to 4 RTTs), then narrows again.
TEST(RecoveryTest, LateAcknowledgementOfALostPacketIsReportedAndWidensTheWindow) {
  Recovery rec(kMs, 0);
  Recorder f;
  for (MessageId m = 0; m < 8; ++m) rec.on_sent(data(m), m * kUs);
  rec.on_ack(ack({{3, 7}}), 107 * kUs, f);  // RTT 100 us
  EXPECT_EQ(rec.time_threshold(), 112'500u);
  rec.detect_losses(115 * kUs, f);
  EXPECT_EQ(f.lost, (std::vector<MessageId>{0, 1, 2}));
  EXPECT_EQ(rec.inflight_bytes(), 0u);
  rec.on_ack(ack({{0, 7}}), 130 * kUs, f);  // ...but they were only reordered
  EXPECT_EQ(f.late, (std::vector<MessageId>{0, 1, 2}));
  EXPECT_EQ(rec.spurious_losses(), 3u);
  EXPECT_EQ(f.acked.size(), 5u) << "late acknowledgements are not reported as ordinary ones";
  EXPECT_EQ(rec.time_threshold(), 2 * rec.rtt().srtt) << "three spurious losses: window 1/8 -> 1/4 -> 1/2 -> 1 RTT";
  rec.detect_losses(130 * kUs + 65 * rec.srtt(), f);
  EXPECT_EQ(rec.time_threshold(), rec.rtt().srtt * 3 / 2) << "halved after 64 quiet RTTs";
  rec.on_ack(ack({{0, 7}}), 140 * kUs, f);
  EXPECT_EQ(f.late.size(), 3u) << "once";
  EXPECT_EQ(rec.logged(), 0u);
}

TEST(RecoveryTest, LostPacketsStayLoggedForLateAcknowledgementsThenLeave) {
  Recovery rec(kMs, 0);
  Recorder f;
  for (MessageId m = 0; m < 5; ++m) rec.on_sent(data(m), 0);
  rec.on_ack(ack({{4, 4}}), 100 * kUs, f);
  rec.detect_losses(200 * kUs, f);
  EXPECT_EQ(f.lost.size(), 4u);
  EXPECT_EQ(rec.logged(), 5u) << "kept for a late acknowledgement";
  EXPECT_EQ(rec.span(), 0u) << "only in-flight packets count against the peer's replay window";
  rec.on_sent(data(5), 200 * kUs + Recovery::kKeepLost);
  EXPECT_EQ(rec.logged(), 1u) << "kKeepLost later they are forgotten";
  EXPECT_EQ(rec.span(), 1u);
}

// Packets of different DSCPs travel in different switch queues: a class-0 PING or control frame overtaking
// approximate data is priority, not loss. Such data is declared lost only at twice the time threshold, and its late
// acknowledgement does not widen the reordering window. Was: one reference (the largest acknowledged packet of any
// DSCP), so every overtaking probe made the data behind it "lost" after 9/8 RTT, the late acknowledgements widened
// the window to 4 RTTs, and the rate law ran blind for 4 RTTs.
TEST(RecoveryTest, PacketsOfOtherQueuesOvertakingAreNotLoss) {
  Recovery rec(kMs, 0);
  Recorder f;
  SentPacket d0 = data(0), d1 = data(1);
  d0.dscp = d1.dscp = 32;  // class 2
  SentPacket ping;
  ping.dscp = 46;  // class 0
  rec.on_sent(d0, 0);
  rec.on_sent(d1, 0);
  rec.on_sent(ping, 0);
  rec.on_ack(ack({{2, 2}}), 100 * kUs, f);  // the ping, RTT 100 us; the data waits in its queue
  EXPECT_EQ(rec.time_threshold(), 112'500u);
  EXPECT_EQ(rec.loss_timer(), 225'000u) << "twice the threshold: only another queue overtook them";
  rec.detect_losses(200 * kUs, f);
  EXPECT_TRUE(f.lost.empty());
  rec.detect_losses(225 * kUs, f);
  EXPECT_EQ(f.lost, (std::vector<MessageId>{0, 1}));
  rec.on_ack(ack({{0, 2}}), 300 * kUs, f);  // they were only queued behind higher priority
  EXPECT_EQ(f.late.size(), 2u);
  EXPECT_EQ(rec.time_threshold(), rec.rtt().srtt + rec.rtt().srtt / 8) << "the window did not widen";
  // Within one queue the normal threshold applies.
  SentPacket d2 = data(2), d3 = data(3);
  d2.dscp = d3.dscp = 32;
  rec.on_sent(d2, 400 * kUs);
  rec.on_sent(d3, 400 * kUs);
  rec.on_ack(ack({{4, 4}, {0, 2}}), 500 * kUs, f);
  EXPECT_EQ(rec.loss_timer(), 400 * kUs + rec.time_threshold());
}

// The recent peak RTT (largest sample of the last one to two kPeakWindows) is remembered, and floors the probe timeout
// only of a session without a sample of its own: a new session to a peer whose queue was seen to fill (engine: the
// per-peer path memory) does not probe its ANNOUNCE while it waits in that queue; with samples the PTO is RFC 9002's.
TEST(RecoveryTest, ProbeTimeoutOfANewSessionStartsFromThePathsRecentPeak) {
  Recovery rec(kMs, 200 * kUs);
  Recorder f;
  TimeNs t = 10 * kMs;
  uint64_t pn = 0;
  auto sample = [&](TimeNs rtt) {
    rec.on_sent(data(MessageId(pn)), t);
    t += rtt;
    rec.on_ack(ack({{pn, pn}}), t, f);
    pn++;
  };
  for (int i = 0; i < 4; ++i) sample(6 * kMs);
  for (int i = 0; i < 16; ++i) sample(200 * kUs);
  EXPECT_EQ(rec.recent_peak_rtt(), 6 * kMs);
  EXPECT_EQ(rec.pto(), rec.srtt() + std::max<TimeNs>(4 * rec.rtt().rttvar, kMs) + 200 * kUs)
      << "with samples: RFC 9002";
  // Two quiet windows later the peak is forgotten.
  t += Recovery::kPeakWindow;
  sample(200 * kUs);
  EXPECT_EQ(rec.recent_peak_rtt(), 6 * kMs) << "still in the previous window";
  t += Recovery::kPeakWindow;
  sample(200 * kUs);
  EXPECT_EQ(rec.recent_peak_rtt(), 200 * kUs);
  // A new session seeded with that path's peak: was 2 * initial_rtt + ack delay = 2.2 ms against a 6 ms queue.
  Recovery fresh(kMs, 200 * kUs);
  EXPECT_EQ(fresh.pto(), 2 * kMs + 200 * kUs);
  fresh.seed_peak_rtt(6 * kMs, t);
  EXPECT_EQ(fresh.pto(), 6 * kMs + 200 * kUs);
}
