// A receiving job (native/src/core/recv_job.*) on its own: the group table, reassembly and admission within the
// receive buffer, early data held until the table is known, in-order delivery of exact groups, ABANDON, UPDATE
// and completion.
#include "core/recv_job.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace netapprox::atp;

namespace {

wire::Announce announce(JobId job, uint32_t n, std::vector<wire::AnnounceEntry> entries, uint32_t n_groups,
                        uint32_t first = 0) {
  wire::Announce a;
  a.job = job;
  a.n_messages = n;
  a.n_groups = n_groups;
  a.first_group = first;
  a.flags = 0;
  a.entries = std::move(entries);
  return a;
}

struct Segment {
  std::vector<uint8_t> bytes;
  wire::Data d;
};

Segment segment(MessageId m, uint32_t msg_len, uint32_t offset, uint16_t seg_size) {
  Segment s;
  s.bytes.assign(std::min<uint32_t>(seg_size, msg_len - offset), uint8_t(m + offset));
  s.d = wire::Data{1, m, msg_len, offset, seg_size, nullptr, static_cast<uint16_t>(s.bytes.size())};
  s.d.payload = s.bytes.data();
  return s;
}

RecvJob::DataResult feed(RecvJob& j, RecvBudget& b, MessageId m, uint32_t len, uint32_t offset, uint16_t seg,
                         std::vector<Delivery>* out, bool events_full = false) {
  Segment s = segment(m, len, offset, seg);
  bool completed;
  return j.on_data(s.d, b, 1 << 20, events_full, 0, out, &completed);
}

RecvJob::TableResult add(RecvJob& j, const wire::Announce& a, RecvBudget* b = nullptr,
                         std::vector<Delivery>* out = nullptr, uint64_t* refused = nullptr) {
  RecvBudget none{1 << 20};
  std::vector<Delivery> ignored;
  uint64_t count = 0;
  if (!j.announced()) j.set_size(a.n_messages, a.n_groups, true);
  return j.add_groups(a, 0, b ? *b : none, out ? out : &ignored, refused ? refused : &count);
}

std::vector<MessageId> ids(const std::vector<Delivery>& v) {
  std::vector<MessageId> out;
  for (const auto& d : v) out.push_back(d.msg);
  return out;
}

// What a message is charged: held (complete), and in reassembly (plus its segment bitmap, one word here).
constexpr uint64_t kO = RecvJob::kMessageOverheadBytes;
constexpr uint64_t held(uint64_t len) { return len + kO; }
constexpr uint64_t partial(uint64_t len) { return len + kO + 8; }

}  // namespace

TEST(RecvJobTest, GroupTableArrivesInChunksAndIsChecked) {
  RecvJob j(1, 0);
  EXPECT_EQ(add(j, announce(1, 5, {{10, 3, 2}}, 2, 0)), RecvJob::TableResult::kIncomplete);
  EXPECT_FALSE(j.ready());
  EXPECT_EQ(add(j, announce(1, 6, {{11, 2, 2}}, 2, 1)), RecvJob::TableResult::kMismatch);
  EXPECT_EQ(add(j, announce(1, 5, {{11, 2, 2}}, 2, 1)), RecvJob::TableResult::kReady);
  EXPECT_TRUE(j.ready());
  EXPECT_EQ(j.groups[1].base, 3u);
  EXPECT_TRUE(j.groups[1].ordered) << "MSR 1 at the announce: in order";
  EXPECT_EQ(add(j, announce(1, 5, {{11, 2, 2}}, 2, 1)), RecvJob::TableResult::kIncomplete);
  RecvJob bad(2, 0);
  EXPECT_EQ(add(bad, announce(2, 5, {{10, 4, 2}}, 1)), RecvJob::TableResult::kBadSizes);
}

TEST(RecvJobTest, ExactGroupIsDeliveredInOrderAndApproximateAtOnce) {
  RecvJob j(1, 0);
  ASSERT_EQ(add(j, announce(1, 6, {{10, 3, 3}, {11, 3, 1}}, 2)), RecvJob::TableResult::kReady);
  RecvBudget b{1 << 20};
  std::vector<Delivery> out;
  EXPECT_EQ(feed(j, b, 2, 100, 0, 100, &out), RecvJob::DataResult::kAccepted);
  EXPECT_EQ(feed(j, b, 1, 100, 0, 100, &out), RecvJob::DataResult::kAccepted);
  EXPECT_TRUE(out.empty()) << "held until message 0 arrives";
  EXPECT_EQ(b.used, 2 * held(100)) << "each held message is charged its length and its overhead";
  EXPECT_EQ(feed(j, b, 5, 150, 0, 100, &out), RecvJob::DataResult::kAccepted);
  EXPECT_TRUE(out.empty()) << "first of two segments";
  EXPECT_EQ(feed(j, b, 5, 150, 100, 100, &out), RecvJob::DataResult::kAccepted);
  EXPECT_EQ(ids(out), (std::vector<MessageId>{5}));
  ASSERT_EQ(out[0].buf.size(), 150u);
  EXPECT_EQ(out[0].buf[120], uint8_t(5 + 100));
  out.clear();
  EXPECT_EQ(feed(j, b, 0, 100, 0, 100, &out), RecvJob::DataResult::kAccepted);
  EXPECT_EQ(ids(out), (std::vector<MessageId>{0, 1, 2}));
  EXPECT_TRUE(j.complete()) << "group 0 exact and complete, group 1 delivered its target of 1";
  EXPECT_EQ(feed(j, b, 0, 100, 0, 100, &out), RecvJob::DataResult::kAccepted) << "duplicates are accepted";
}

TEST(RecvJobTest, AdmissionRefusesBeyondTheBufferExceptTheNextInOrderMessage) {
  RecvJob j(1, 0);
  ASSERT_EQ(add(j, announce(1, 3, {{10, 3, 3}}, 1)), RecvJob::TableResult::kReady);
  RecvBudget b{partial(800) + 200};
  std::vector<Delivery> out;
  EXPECT_EQ(feed(j, b, 1, 800, 0, 100, &out), RecvJob::DataResult::kAccepted);  // 800 + overhead charged up front
  EXPECT_EQ(feed(j, b, 2, 400, 0, 100, &out), RecvJob::DataResult::kNoBuffer);
  EXPECT_EQ(feed(j, b, 0, 400, 0, 100, &out), RecvJob::DataResult::kAccepted) << "head of line";
  EXPECT_EQ(b.used, partial(800) + partial(400));  // both in reassembly (one segment each so far)
  EXPECT_EQ(feed(j, b, 2, 10, 0, 100, &out, true), RecvJob::DataResult::kNoBuffer)
      << "a message's last segment waits while the event queue is full";
  EXPECT_EQ(feed(j, b, 2, 10, 0, 100, &out, false), RecvJob::DataResult::kNoBuffer) << "and the buffer is full";
  j.release_buffers(b);
  EXPECT_EQ(b.used, 0u);
}

TEST(RecvJobTest, AbandonMarksApproximateMessagesLostAndRefusesExactOnes) {
  RecvJob j(1, 0);
  ASSERT_EQ(add(j, announce(1, 4, {{10, 2, 1}, {11, 2, 2}}, 2)), RecvJob::TableResult::kReady);
  RecvBudget b{1 << 20};
  std::vector<Delivery> out;
  EXPECT_EQ(feed(j, b, 0, 200, 0, 100, &out), RecvJob::DataResult::kAccepted);  // partial
  EXPECT_EQ(b.used, partial(200));
  std::vector<std::pair<MessageId, uint64_t>> lost;
  uint64_t refused = 0;
  j.on_abandon({0, 2, 9}, b, &lost, &refused);
  EXPECT_EQ(lost, (std::vector<std::pair<MessageId, uint64_t>>{{0, 10}}));
  EXPECT_EQ(refused, 1u);
  EXPECT_EQ(b.used, 0u) << "the partial message's charge is returned";
  EXPECT_TRUE(j.resolved(0));
  EXPECT_FALSE(j.complete());
  JobReport r;
  j.fill_report(r, 0, 100);
  EXPECT_EQ(r.groups[0].lost_ranges, (std::vector<IdRange>{{0, 1}}));
}

TEST(RecvJobTest, LoweringAnExactGroupHandsOverWhatItHeld) {
  RecvJob j(1, 0);
  ASSERT_EQ(add(j, announce(1, 3, {{10, 3, 3}}, 1)), RecvJob::TableResult::kReady);
  RecvBudget b{1 << 20};
  std::vector<Delivery> out;
  feed(j, b, 2, 10, 0, 100, &out);
  feed(j, b, 1, 10, 0, 100, &out);
  EXPECT_TRUE(out.empty());
  uint64_t refused = 0;
  j.on_update({{0, 2}, {5, 1}}, &out, &refused);
  EXPECT_EQ(refused, 1u);
  EXPECT_EQ(ids(out), (std::vector<MessageId>{1, 2}));
  EXPECT_TRUE(j.complete());
}

// DATA that arrives before the group table (the ANNOUNCE lost, late, or in chunks) is held within the buffer, then
// handed over: approximate messages delivered, exact ones in order, ids beyond the job discarded.
TEST(RecvJobTest, EarlyDataIsHeldUntilTheTableIsKnown) {
  RecvJob j(1, 0);
  RecvBudget b{1 << 20};
  std::vector<Delivery> out;
  EXPECT_EQ(feed(j, b, 4, 100, 0, 100, &out), RecvJob::DataResult::kAccepted);  // group 1 (exact), not first
  EXPECT_EQ(feed(j, b, 0, 150, 0, 100, &out), RecvJob::DataResult::kAccepted);  // group 0, first of 2 segments
  EXPECT_EQ(feed(j, b, 1, 100, 0, 100, &out), RecvJob::DataResult::kAccepted);  // group 0, complete
  EXPECT_EQ(feed(j, b, 9, 100, 0, 100, &out), RecvJob::DataResult::kAccepted);  // beyond the job (6 messages)
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(j.early_messages(), 4u);
  EXPECT_EQ(b.used, partial(150) + 3 * held(100) + 4 * RecvJob::kEarlyMessageBytes);
  EXPECT_EQ(feed(j, b, 1, 100, 0, 100, &out), RecvJob::DataResult::kAccepted) << "a duplicate";
  EXPECT_FALSE(j.complete());
  std::vector<Delivery> started;
  uint64_t refused = 0;
  ASSERT_EQ(add(j, announce(1, 6, {{10, 3, 1}, {11, 3, 3}}, 2), &b, &started, &refused), RecvJob::TableResult::kReady);
  EXPECT_EQ(ids(started), (std::vector<MessageId>{1})) << "message 4 waits for 3; 0 is partial; 9 is not a message";
  EXPECT_EQ(refused, 1u);
  EXPECT_EQ(b.used, partial(150) + 2 * held(100)) << "the early overhead is returned, and message 9's charge";
  EXPECT_EQ(feed(j, b, 0, 150, 100, 100, &out), RecvJob::DataResult::kAccepted);
  EXPECT_EQ(feed(j, b, 3, 100, 0, 100, &out), RecvJob::DataResult::kAccepted);
  EXPECT_EQ(ids(out), (std::vector<MessageId>{0, 3, 4}));
}

TEST(RecvJobTest, EarlyDataIsRefusedOnlyWhenTheBufferIsFull) {
  RecvJob j(1, 0);
  constexpr uint64_t kEarly = RecvJob::kEarlyMessageBytes;
  RecvBudget b{partial(600) + kEarly + partial(100) + kEarly};
  std::vector<Delivery> out;
  EXPECT_EQ(feed(j, b, 0, 600, 0, 100, &out), RecvJob::DataResult::kAccepted);
  EXPECT_EQ(feed(j, b, 1, 200, 0, 100, &out), RecvJob::DataResult::kNoBuffer) << "200 + overhead does not fit";
  EXPECT_EQ(feed(j, b, 1, 100, 0, 100, &out), RecvJob::DataResult::kAccepted);
  j.release_buffers(b);
  EXPECT_EQ(b.used, 0u);
}
