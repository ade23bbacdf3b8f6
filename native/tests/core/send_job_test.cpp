// A sending job (native/src/core/send_job.*) on its own: MRDF and message-order scheduling, the retransmission
// criterion, group satisfaction and the session buffer accounting.
#include "core/send_job.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

using namespace netapprox::atp;

namespace {

constexpr uint32_t kSeg = 1000;

RateControlConfig rc_config(Mode m, uint32_t repair_after) {
  RateControlConfig c{{1.25e8, 0.125, 0.01}, mode_flags(m), 100'000, 1472};
  c.repair_after = repair_after;
  return c;
}

struct Fixture {
  uint64_t buffered = 0;
  SendJob job;
  Fixture(std::vector<GroupSpec> groups, bool mrdf_mode, bool mrdf_job = true,
          uint32_t repair_after = EngineConfig{}.repair_after_segments)
      : job(JobSpec{7, std::move(groups), mrdf_job}, mrdf_mode, kSeg, rate_law::kPaper,
            rc_config(mrdf_mode ? Mode::kFull : Mode::kRc, repair_after), buffered) {}
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
// ABANDON has not gone out: it counts as delivered and the allowance is restored. Run with the paper's rule
// (repair_after_segments 0): with the default a two-segment message with both segments out is repaired, not given
// up (MultiSegmentMessageLosingASegmentAfterMostWasSentIsRepaired), and a given-up message with unsent segments can
// never be completed by a late acknowledgement.
TEST(SendJobTest, LateAcknowledgementTakesBackAGiveUpNotYetAnnounced) {
  Fixture f({{1, 4, 0.5}}, true, true, 0);  // allowance 2
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

// The repair rule (docs/protocol.md section 5): a multi-segment message that loses a segment after most of it was
// sent costs one retransmitted segment, not its sent segments plus a whole replacement message - even while its
// group could afford to lose it. (Fails on the paper's rule: the message was given up.)
TEST(SendJobTest, MultiSegmentMessageLosingASegmentAfterMostWasSentIsRepaired) {
  Fixture f({{1, 4, 0.5}}, true);  // allowance 2
  f.job.set_running(0);
  for (uint32_t i = 0; i < 4; ++i) f.submit(0, i, 4 * kSeg);
  ASSERT_EQ(f.drain().size(), 16u);
  f.job.on_segment_acked(0, 0);
  f.job.on_segment_lost(0, 1);
  EXPECT_EQ(f.job.groups[0].lost, 0u) << "the allowance is left for losses that cost no capacity";
  EXPECT_TRUE(f.job.pending_abandons().empty());
  EXPECT_EQ(f.job.repairs_within_allowance, 1u);
  EXPECT_EQ(f.job.given_up_for_loss, 0u);
  SegmentToSend s;
  ASSERT_TRUE(f.job.take_next_segment(&s));
  EXPECT_EQ(s.msg, 0u);
  EXPECT_EQ(s.seg, 1u);
  EXPECT_TRUE(s.retransmission);
  EXPECT_FALSE(f.job.take_next_segment(&s)) << "only the lost segment is sent again";
  for (uint32_t seg = 1; seg < 4; ++seg) f.job.on_segment_acked(0, seg);
  EXPECT_EQ(f.job.groups[0].delivered, 1u);
  EXPECT_EQ(f.job.segments_given_up_for_loss, 0u);
  // The same loss with the paper's rule gives the message up and wastes the 4 segments it had sent.
  Fixture paper({{1, 4, 0.5}}, true, true, 0);
  paper.job.set_running(0);
  for (uint32_t i = 0; i < 4; ++i) paper.submit(0, i, 4 * kSeg);
  paper.drain();
  paper.job.on_segment_lost(0, 1);
  EXPECT_EQ(paper.job.groups[0].lost, 1u);
  EXPECT_EQ(paper.job.segments_given_up_for_loss, 4u);
  EXPECT_EQ(paper.job.repairs_within_allowance, 0u);
}

// A single-segment message has nothing sent beyond its lost segment: giving it up wastes nothing the repair would
// not, so it is still given up while the group can afford it (FBKV-like jobs keep the paper's rule).
TEST(SendJobTest, SingleSegmentMessageIsStillGivenUp) {
  Fixture f({{1, 4, 0.5}}, true);
  f.job.set_running(0);
  for (uint32_t i = 0; i < 4; ++i) f.submit(0, i, kSeg);
  f.drain();
  f.job.on_segment_lost(2, 0);
  EXPECT_EQ(f.job.groups[0].lost, 1u);
  EXPECT_EQ(f.job.pending_abandons(), (std::vector<MessageId>{2}));
  EXPECT_EQ(f.job.given_up_for_loss, 1u);
  EXPECT_EQ(f.job.segments_given_up_for_loss, 1u);
  EXPECT_EQ(f.job.repairs_within_allowance, 0u);
  EXPECT_FALSE(f.job.has_ready());
}

// A job of mostly one-segment messages (FBKV-like) keeps the paper's rule even for its rare large message: its
// mean segments per message is below repair_after_segments.
TEST(SendJobTest, AJobOfMostlySingleSegmentMessagesGivesUpItsRareLargeOne) {
  Fixture f({{1, 8, 0.5}}, true);
  f.job.set_running(0);
  for (uint32_t i = 0; i < 7; ++i) f.submit(0, i, 100);
  f.submit(0, 7, 4 * kSeg);  // 11 segments over 8 messages: 1.375 per message
  f.drain();
  f.job.on_segment_lost(7, 3);
  EXPECT_EQ(f.job.groups[0].lost, 1u);
  EXPECT_EQ(f.job.pending_abandons(), (std::vector<MessageId>{7}));
  EXPECT_EQ(f.job.repairs_within_allowance, 0u);
  EXPECT_EQ(f.job.segments_given_up_for_loss, 4u);
}

// A message whose first segment is lost before any other was sent: giving it up wastes one segment and saves the
// rest, so it is given up (the allowance moves the job on to the next message).
TEST(SendJobTest, MessageWhoseFirstSegmentIsLostBeforeTheRestAreSentIsGivenUp) {
  Fixture f({{1, 4, 0.5}}, true, /*mrdf_job=*/false);  // message order
  f.job.set_running(0);
  for (uint32_t i = 0; i < 4; ++i) f.submit(0, i, 8 * kSeg);
  SegmentToSend s;
  ASSERT_TRUE(f.job.take_next_segment(&s));
  ASSERT_EQ(s.msg, 0u);
  ASSERT_EQ(s.seg, 0u);
  f.job.on_segment_lost(0, 0);
  EXPECT_EQ(f.job.groups[0].lost, 1u);
  EXPECT_EQ(f.job.pending_abandons(), (std::vector<MessageId>{0}));
  EXPECT_EQ(f.job.segments_given_up_for_loss, 1u);
  ASSERT_TRUE(f.job.take_next_segment(&s));
  EXPECT_EQ(s.msg, 1u) << "the next message, not the rest of the given-up one";
  EXPECT_EQ(f.buffered, 3 * SendJob::charge(8 * kSeg));
}

namespace {
struct LossyRun {
  uint32_t delivered = 0, lost = 0, target = 0, allowance = 0;
  uint64_t sent = 0, given_up_segments = 0;
};
// One job of `msgs` messages of `segs` segments through a path that loses each segment with probability p
// (seeded); every sent segment's fate is known before the next round. Runs until nothing is left to send.
LossyRun lossy_run(uint32_t repair_after, uint32_t msgs, uint32_t segs, double msr, double p, uint64_t seed) {
  Fixture f({{1, msgs, msr}}, true, true, repair_after);
  f.job.set_running(0);
  for (uint32_t i = 0; i < msgs; ++i) f.submit(0, i, size_t{segs} * kSeg);
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution lose(p);
  LossyRun r;
  for (int round = 0; round < 10000 && f.job.has_ready(); ++round) {
    // A window of up to 24 segments per round, as a pacer would send before the first fates come back.
    std::vector<std::pair<MessageId, uint32_t>> window;
    SegmentToSend s;
    while (window.size() < 24 && f.job.take_next_segment(&s)) window.emplace_back(s.msg, s.seg);
    r.sent += window.size();
    for (auto [m, seg] : window) {
      if (lose(rng))
        f.job.on_segment_lost(m, seg);
      else
        f.job.on_segment_acked(m, seg);
    }
  }
  const SendGroup& g = f.job.groups[0];
  r.delivered = g.delivered;
  r.lost = g.lost;
  r.target = g.target;
  r.allowance = g.allowance();
  r.given_up_segments = f.job.segments_given_up_for_loss;
  return r;
}
}  // namespace

// With repairs the group still meets its target, never loses more than 1 - MSR of its messages, and the job sends
// fewer segments for it than with the paper's rule (which wastes the sent part of every message it gives up and
// sends a whole replacement), over 20 seeded runs of 40 messages of 8 segments at 10 % segment loss.
TEST(SendJobTest, RepairsMeetTheTargetWithinTheAllowanceAndSendLess) {
  int fewer = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const LossyRun repair = lossy_run(2, 40, 8, 0.75, 0.10, seed);
    const LossyRun paper = lossy_run(0, 40, 8, 0.75, 0.10, seed);
    for (const LossyRun* r : {&repair, &paper}) {
      EXPECT_GE(r->delivered, r->target) << "seed " << seed;
      EXPECT_LE(r->lost, r->allowance) << "seed " << seed;
      EXPECT_EQ(r->delivered + r->lost, 40u) << "seed " << seed << ": every message delivered or given up";
    }
    EXPECT_LT(repair.given_up_segments, paper.given_up_segments) << "seed " << seed;
    fewer += repair.sent < paper.sent;
  }
  EXPECT_GE(fewer, 18) << "repairs sent fewer segments in " << fewer << " of 20 runs";
}
