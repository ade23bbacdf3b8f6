// A sending job (native/src/core/send_job.*) on its own: MRDF and message-order scheduling, the retransmission
// criterion, group satisfaction and the session buffer accounting.
#include "core/send_job.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace netapprox::atp;

namespace {

constexpr uint32_t kSeg = 1000;

RateControlConfig rc_config(Mode m) { return RateControlConfig{{1.25e8, 0.125, 0.01}, mode_flags(m), 100'000, 1472}; }

struct Fixture {
  uint64_t buffered = 0;
  SendJob job;
  Fixture(std::vector<GroupSpec> groups, bool mrdf_mode, bool mrdf_job = true)
      : job(JobSpec{7, std::move(groups), mrdf_job}, mrdf_mode, kSeg, rate_law::kPaper,
            rc_config(mrdf_mode ? Mode::kFull : Mode::kRc), buffered) {}
  void submit(uint32_t g, uint32_t i, size_t len) {
    std::vector<uint8_t> d(len, uint8_t(i));
    ASSERT_EQ(job.submit(g, i, d.data(), d.size(), 1 << 30), Status::kOk);
  }
  // Sends everything ready; returns (message, segment) in send order.
  std::vector<std::pair<MessageId, uint32_t>> drain() {
    std::vector<std::pair<MessageId, uint32_t>> out;
    SegmentToSend s;
    while (job.take_next_segment(&s)) out.emplace_back(s.msg, s.seg);
    return out;
  }
};

}  // namespace

// Data does not wait for the announce's acknowledgement: a first window goes right behind it.
TEST(SendJobTest, TheFirstWindowMayGoBeforeTheAnnounceIsAcknowledged) {
  Fixture f({{1, 4, 0.5}}, true);
  f.job.first_window = 2 * kSeg;
  for (uint32_t i = 0; i < 4; ++i) f.submit(0, i, kSeg);
  EXPECT_EQ(f.buffered, 4 * SendJob::charge(kSeg));
  SegmentToSend s;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(f.job.may_send_data());
    ASSERT_TRUE(f.job.take_next_segment(&s));
  }
  EXPECT_FALSE(f.job.may_send_data()) << "first window used";
  EXPECT_TRUE(f.job.has_ready());
  f.job.set_running(0);
  EXPECT_TRUE(f.job.may_send_data());
  EXPECT_EQ(f.job.early_bytes_sent, 2 * kSeg);
}

TEST(SendJobTest, MrdfSendsTheMessageWithLeastRemainingDataFirst) {
  Fixture f({{1, 4, 0.5}, {2, 2, 1.0}}, true);
  f.job.set_running(0);
  f.submit(0, 0, 3 * kSeg);
  f.submit(0, 1, 1 * kSeg);
  f.submit(0, 2, 2 * kSeg);
  f.submit(1, 0, 2 * kSeg);  // exact: key 0, goes before every approximate message
  SegmentToSend s;
  ASSERT_TRUE(f.job.take_next_segment(&s));
  EXPECT_EQ(s.msg, 4u);
  EXPECT_TRUE(s.exact);
  ASSERT_TRUE(f.job.take_next_segment(&s));
  EXPECT_EQ(s.msg, 4u);
  EXPECT_EQ(s.offset, kSeg);
  const auto rest = f.drain();
  const std::vector<std::pair<MessageId, uint32_t>> expect = {{1, 0}, {2, 0}, {2, 1}, {0, 0}, {0, 1}, {0, 2}};
  EXPECT_EQ(rest, expect);
}

TEST(SendJobTest, WithoutMrdfMessagesGoInIdOrder) {
  for (auto [mode, job_flag] : {std::pair{false, true}, std::pair{true, false}}) {
    Fixture f({{1, 3, 0.5}}, mode, job_flag);
    f.job.set_running(0);
    f.submit(0, 0, 3 * kSeg);
    f.submit(0, 1, 1 * kSeg);
    f.submit(0, 2, 2 * kSeg);
    const std::vector<std::pair<MessageId, uint32_t>> expect = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {2, 0}, {2, 1}};
    EXPECT_EQ(f.drain(), expect);
  }
}

TEST(SendJobTest, LossWithinTheAllowanceGivesTheMessageUpThenRetransmits) {
  Fixture f({{1, 4, 0.5}}, true);  // allowance 2
  f.job.set_running(0);
  for (uint32_t i = 0; i < 4; ++i) f.submit(0, i, 10);
  f.drain();
  f.job.on_segment_lost(0, 0);
  f.job.on_segment_lost(1, 0);
  EXPECT_EQ(f.job.groups[0].lost, 2u);
  EXPECT_EQ(f.job.pending_abandons(), (std::vector<MessageId>{0, 1}));
  EXPECT_FALSE(f.job.has_ready()) << "given-up messages are not resent";
  f.job.on_segment_lost(2, 0);  // allowance used: resend
  EXPECT_EQ(f.job.groups[0].lost, 2u);
  EXPECT_EQ(f.drain(), (std::vector<std::pair<MessageId, uint32_t>>{{2, 0}}));
  EXPECT_EQ(f.buffered, 2 * SendJob::charge(10));  // two messages left, 10 bytes each
  EXPECT_EQ(f.job.take_abandons().size(), 2u);
  EXPECT_TRUE(f.job.pending_abandons().empty());
}

TEST(SendJobTest, ExactGroupsAlwaysRetransmit) {
  Fixture f({{1, 2, 1.0}}, true);
  f.job.set_running(0);
  f.submit(0, 0, 2 * kSeg);
  f.drain();
  f.job.on_segment_lost(0, 1);
  EXPECT_EQ(f.job.groups[0].lost, 0u);
  SegmentToSend s;
  ASSERT_TRUE(f.job.take_next_segment(&s));
  EXPECT_TRUE(s.retransmission);
  EXPECT_EQ(s.seg, 1u);
}

TEST(SendJobTest, ASatisfiedGroupGivesUpTheRest) {
  Fixture f({{1, 4, 0.5}}, true);  // target 2
  f.job.set_running(0);
  for (uint32_t i = 0; i < 3; ++i) f.submit(0, i, 10);
  f.drain();
  f.job.on_segment_acked(0, 0);
  f.job.on_segment_acked(1, 0);
  EXPECT_EQ(f.job.groups[0].delivered, 2u);
  EXPECT_EQ(f.job.groups[0].lost, 1u) << "message 2 is not needed any more";
  EXPECT_EQ(f.buffered, 0u);
  f.submit(0, 3, 10);  // submitted after: given up at once, never buffered
  EXPECT_EQ(f.job.groups[0].lost, 2u);
  EXPECT_EQ(f.buffered, 0u);
  EXPECT_EQ(f.job.pending_abandons(), (std::vector<MessageId>{2, 3}));
}

TEST(SendJobTest, SubmitRespectsTheSessionBufferAndDuplicates) {
  Fixture f({{1, 4, 0.5}}, true);
  std::vector<uint8_t> d(600);
  EXPECT_EQ(f.job.submit(0, 0, d.data(), d.size(), 1000), Status::kOk);
  EXPECT_EQ(f.job.submit(0, 0, d.data(), d.size(), 1000), Status::kAlreadyExists);
  EXPECT_EQ(f.job.submit(0, 1, d.data(), d.size(), 1000), Status::kWouldBlock);
  // 600 bytes fit a 856-byte buffer only with their overhead counted once; the overhead alone is charged too.
  EXPECT_EQ(f.job.submit(0, 1, d.data(), 1000 - 600 - 2 * SendJob::kMessageOverheadBytes + 1, 1000),
            Status::kWouldBlock);
  EXPECT_EQ(f.buffered, SendJob::charge(600));  // 600 bytes + the per-message overhead
  f.job.release_buffers();
  EXPECT_EQ(f.buffered, 0u);
}

TEST(SendJobTest, RaisedTargetIsClampedToWhatIsLeft) {
  Fixture f({{1, 4, 0.25}}, true);  // allowance 3
  f.job.set_running(0);
  for (uint32_t i = 0; i < 4; ++i) f.submit(0, i, 10);
  f.drain();
  f.job.on_segment_lost(0, 0);
  f.job.on_segment_lost(1, 0);
  EXPECT_EQ(f.job.set_target(0, 4), 2u);
  EXPECT_TRUE(f.job.groups[0].unreachable);
  EXPECT_EQ(f.job.packets_per_message(), 1.0);
}

// A message given up for a loss that was not one (the segment is acknowledged late) is taken back while its
// ABANDON has not gone out: it counts as delivered and the allowance is restored.
TEST(SendJobTest, LateAcknowledgementTakesBackAGiveUpNotYetAnnounced) {
  Fixture f({{1, 4, 0.5}}, true);  // allowance 2
  f.job.set_running(0);
  for (uint32_t i = 0; i < 4; ++i) f.submit(0, i, 2 * kSeg);
  f.drain();
  f.job.on_segment_acked(0, 0);
  f.job.on_segment_lost(0, 1);  // given up
  EXPECT_EQ(f.job.groups[0].lost, 1u);
  EXPECT_EQ(f.job.pending_abandons(), (std::vector<MessageId>{0}));
  f.job.on_segment_late_ack(0, 1);
  EXPECT_EQ(f.job.groups[0].lost, 0u);
  EXPECT_EQ(f.job.groups[0].delivered, 1u);
  EXPECT_TRUE(f.job.pending_abandons().empty());
  // Once the ABANDON is on its way the peer will count the message lost: too late to take it back.
  f.job.on_segment_lost(1, 0);
  EXPECT_EQ(f.job.take_abandons(), (std::vector<MessageId>{1}));
  f.job.on_segment_late_ack(1, 0);
  EXPECT_EQ(f.job.groups[0].lost, 1u);
  EXPECT_EQ(f.job.groups[0].delivered, 1u);
  // A segment waiting for retransmission needs none once acknowledged late.
  f.job.on_segment_lost(3, 0);
  EXPECT_EQ(f.job.take_abandons(), (std::vector<MessageId>{3}));
  f.job.on_segment_lost(2, 0);  // allowance used: resend
  ASSERT_TRUE(f.job.has_ready());
  f.job.on_segment_late_ack(2, 0);
  EXPECT_FALSE(f.job.has_ready()) << "no retransmission left to send (its second segment is in flight)";
  f.job.on_segment_acked(2, 1);
  EXPECT_EQ(f.job.groups[0].delivered, 2u);
}
