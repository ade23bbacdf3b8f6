// No handshake round trip before data: a job's first window travels right behind its ANNOUNCE, and the receiver
// holds early data within its buffer until the group table is known.
#include <gtest/gtest.h>

#include "core/wire.hpp"
#include "sim_jobs.hpp"

using namespace netapprox::atp;
using namespace netapprox::atp::sim;

namespace {

wire::PacketType type_of(const uint8_t* p, size_t len) {
  wire::Header h;
  EXPECT_EQ(wire::parse_header(p, len, &h), wire::ParseError::kOk);
  return h.type;
}

LinkConfig path(TimeNs rtt) {
  LinkConfig l;
  l.delay = rtt / 2;
  return l;
}

}  // namespace

// An FBKV-like job (300 messages of 200 bytes, 60 KB) fits one first window: it completes one round trip after it
// starts, as a request on a pooled TCP connection would. Was: DATA waited for the ANNOUNCE's acknowledgement, so
// every job paid an extra round trip (JCT > 2 RTT).
TEST(EarlyDataTest, ASmallJobNeedsOneRoundTrip) {
  constexpr TimeNs kRtt = 2 * kMs;
  EngineConfig c = test_config();
  Sim s(c, c, path(kRtt), path(kRtt), 91);
  TimeNs announce_at = kNever, first_data_at = kNever, first_ack_at = kNever;
  s.on_transmit_a = [&](const uint8_t* p, size_t n, uint8_t) {
    const auto t = type_of(p, n);
    if (t == wire::PacketType::kAnnounce && announce_at == kNever) announce_at = s.now();
    const bool data = t == wire::PacketType::kData || t == wire::PacketType::kDataBundle;  // 200 B: bundles
    if (data && first_data_at == kNever) first_data_at = s.now();
  };
  s.on_event_a = [&](Engine&, Event&) {};
  s.on_transmit_b = [&](const uint8_t* p, size_t n, uint8_t) {
    if (type_of(p, n) == wire::PacketType::kAck && first_ack_at == kNever) first_ack_at = s.now();
  };
  Job j = make_job(1, {{300, 0.75}}, 200);
  const TimeNs t0 = s.now();
  submit_all(s, j);
  ASSERT_TRUE(s.run([&] { return report_of(s.events_a, 1) != nullptr; }, t0 + 5 * kSec));
  auto r = report_of(s.events_a, 1);
  EXPECT_EQ(r->status, Status::kOk);
  EXPECT_EQ(announce_at, t0);
  EXPECT_EQ(first_data_at, t0) << "the first DATA goes right behind the ANNOUNCE";
  EXPECT_LT(first_data_at, first_ack_at);
  EXPECT_LT(r->finished - r->started, kRtt + kRtt / 2) << "one round trip plus the job's transmission";
  EXPECT_GE(s.delivered_b.size(), 225u);
}

// The ANNOUNCE is lost: the first window reaches the receiver anyway and is held; its acknowledgements show the
// ANNOUNCE missing (time threshold), which goes again at once. Every message arrives exactly once, in order for
// the exact group.
TEST(EarlyDataTest, DataBeforeItsAnnounceIsHeldAndDeliveredOnceTheTableArrives) {
  constexpr TimeNs kRtt = 2 * kMs;
  EngineConfig c = test_config();
  Sim s(c, c, path(kRtt), path(kRtt), 92);
  int dropped = 0;
  s.drop_a = [&](const uint8_t* p, size_t n) {
    return type_of(p, n) == wire::PacketType::kAnnounce && dropped < 1 && ++dropped;
  };
  TimeNs started_at = kNever;
  s.on_event_b = [&](Engine&, Event& e) {
    if (e.type == EventType::kJobStarted) started_at = s.now();
  };
  Job j = make_job(2, {{20, 1.0}, {20, 0.5}}, 1000);
  const TimeNs t0 = s.now();
  submit_all(s, j);
  ASSERT_TRUE(s.run([&] { return report_of(s.events_a, 2) != nullptr; }, t0 + 5 * kSec));
  EXPECT_EQ(report_of(s.events_a, 2)->status, Status::kOk);
  EXPECT_EQ(report_of(s.events_a, 2)->announces_sent, 2u);
  auto rx = report_of(s.events_b, 2);
  ASSERT_NE(rx, nullptr);
  EXPECT_GT(rx->start_to_running, kRtt / 2) << "created by early data, ready when the second ANNOUNCE came";
  EXPECT_LE(started_at - t0, 2 * kRtt + kRtt / 2) << "the ANNOUNCE was resent after ~9/8 RTT, not a PTO";
  std::vector<MessageId> exact;
  std::set<MessageId> seen;
  for (const auto& d : s.delivered_b) {
    EXPECT_TRUE(seen.insert(d.message).second) << "message " << d.message << " delivered twice";
    EXPECT_EQ(d.data, payload(2, d.message, 1000));
    if (d.message < 20) exact.push_back(d.message);
  }
  ASSERT_EQ(exact.size(), 20u);
  for (MessageId i = 0; i < 20; ++i) EXPECT_EQ(exact[i], i);
  EXPECT_EQ(s.b().stats().recv_buffered, 0u);
}

// Early data is refused (and counted) only when the receive buffer is full; what was refused is repaired like any
// loss and the job completes. The receiver never holds more than its buffer.
TEST(EarlyDataTest, EarlyDataBeyondTheBufferIsDroppedAndCounted) {
  constexpr TimeNs kRtt = 2 * kMs;
  EngineConfig c = test_config();
  c.recv_buffer_bytes = 64 * 1024;
  Sim s(c, c, path(kRtt), path(kRtt), 93);
  int dropped = 0;
  s.drop_a = [&](const uint8_t* p, size_t n) {
    return type_of(p, n) == wire::PacketType::kAnnounce && dropped < 1 && ++dropped;
  };
  uint64_t max_buffered = 0;
  s.on_event_b = [&](Engine& e, Event&) { max_buffered = std::max(max_buffered, e.stats().recv_buffered); };
  Job j = make_job(3, {{120, 1.0}}, 1000);  // 120 KB: more than the first window and the buffer
  submit_all(s, j);
  ASSERT_TRUE(s.run([&] { return report_of(s.events_b, 3) != nullptr; }, s.now() + 10 * kSec));
  EXPECT_EQ(report_of(s.events_b, 3)->status, Status::kOk);
  EXPECT_EQ(s.delivered_b.size(), 120u);
  EXPECT_GT(s.b().stats().dropped_no_buffer, 0u) << "64 KB of early data and its overhead do not fit 64 KB";
  EXPECT_LE(max_buffered, c.recv_buffer_bytes);
}
