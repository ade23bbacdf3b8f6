// Loss recovery (native/src/core/recovery.*) on its own: the RTT estimator, acknowledgement processing, and the
// three ways a packet is declared lost (packet threshold, time threshold, probe timeout).
#include <gtest/gtest.h>

#include <vector>

#include "core/recovery.hpp"

using namespace netapprox::atp;

namespace {

constexpr TimeNs kUs = 1'000;
constexpr TimeNs kMs = 1'000'000;

struct Recorder final : PacketFate {
  std::vector<MessageId> acked, lost;  // DATA packets by message id (tests use one packet per message)
  void on_acked(const SentPacket& p) override { acked.push_back(p.msg); }
  void on_lost(const SentPacket& p) override { lost.push_back(p.msg); }
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

TEST(RecoveryTest, PacketThresholdDeclaresLoss) {
  Recovery rec(kMs, 0);
  Recorder f;
  for (MessageId m = 0; m < 5; ++m) rec.on_sent(data(m), 0);
  rec.on_ack(ack({{2, 2}}), 10 * kUs, f);  // 0 and 1 are 2 and 1 below: not yet
  EXPECT_TRUE(f.lost.empty());
  rec.on_ack(ack({{3, 3}, {2, 2}}), 11 * kUs, f);  // 0 is now 3 below the largest
  EXPECT_EQ(f.lost, (std::vector<MessageId>{0}));
  rec.on_ack(ack({{4, 4}, {2, 3}}), 12 * kUs, f);
  EXPECT_EQ(f.lost, (std::vector<MessageId>{0, 1}));
}

TEST(RecoveryTest, TimeThresholdDeclaresLossBehindTheLargestAcknowledged) {
  Recovery rec(kMs, 0);
  Recorder f;
  rec.on_sent(data(0), 0);
  rec.on_sent(data(1), 0);
  rec.on_ack(ack({{1, 1}}), 100 * kUs, f);  // RTT 100 us; packet 0 is behind, sent 100 us ago < 9/8 RTT
  EXPECT_TRUE(f.lost.empty());
  rec.detect_losses(112 * kUs, false, f);
  EXPECT_TRUE(f.lost.empty());
  rec.detect_losses(113 * kUs, false, f);  // 9/8 * 100 us = 112.5 us
  EXPECT_EQ(f.lost, (std::vector<MessageId>{0}));
}

TEST(RecoveryTest, ProbeTimeoutFiresOnlyWithoutAckProgress) {
  Recovery rec(kMs, 200 * kUs);
  Recorder f;
  rec.on_sent(data(0), 0);
  rec.on_sent(data(1), 0);
  // Before any sample: PTO = 2 * initial_rtt + ack_delay.
  EXPECT_EQ(rec.pto(), 2 * kMs + 200 * kUs);
  EXPECT_EQ(rec.loss_deadline(), 2 * kMs + 200 * kUs);
  rec.on_ack(ack({{0, 0}}), kMs, f);  // progress at 1 ms: packet 1 is not behind the largest
  EXPECT_TRUE(f.lost.empty());
  const TimeNs deadline = rec.loss_deadline();
  EXPECT_EQ(deadline, kMs + rec.pto()) << "counted from the last acknowledgement progress";
  rec.detect_losses(deadline - 1, true, f);
  EXPECT_TRUE(f.lost.empty());
  rec.detect_losses(deadline, true, f);
  EXPECT_EQ(f.lost, (std::vector<MessageId>{1}));
  EXPECT_EQ(rec.loss_deadline(), kNever);
}
