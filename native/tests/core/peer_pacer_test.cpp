// The per-peer pacer of approximate-class DATA (core/peer_pacer.hpp; docs/protocol.md section 10, "Peer pacer"):
// its decisions alone, then in an engine whose jobs to one peer start together.
#include "core/peer_pacer.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "core/engine.hpp"

using namespace netapprox::atp;

namespace {
constexpr TimeNs kUs = 1'000;
constexpr TimeNs kMs = 1'000'000;
constexpr double kRmax = 2.5e7;  // 200 Mbit/s in bytes per second
constexpr double kFrame = 1514;  // 1472 + 42
constexpr TimeNs kSrtt = 1 * kMs;

// Resolves `acked` and `lost` packets of kFrame bytes at `from`, then one more acknowledged at `to` (which closes
// the decision: `to` - `from` is at least one interval).
void resolve(PeerPacer& p, TimeNs from, TimeNs to, int acked, int lost) {
  for (int i = 0; i < acked + lost; ++i) p.on_resolved(from, i < acked, kFrame, kSrtt);
  p.on_resolved(to, true, kFrame, kSrtt);
}
}  // namespace

// After an idle moment the pacer lags `now` by at most two full datagrams: three go back to back, not more, however
// many jobs share it.
TEST(PeerPacerTest, BurstAllowanceIsTwoDatagrams) {
  PeerPacer p(kRmax, kFrame, 100 * kUs);
  const TimeNs t = 50 * kMs;  // long idle
  int sent = 0;
  while (p.next_send() <= t && sent < 100) {
    p.on_sent(t, kFrame);
    sent++;
  }
  EXPECT_EQ(sent, 3);
  EXPECT_EQ(p.allowance(), TimeNs(2 * kFrame * 1e9 / kRmax));
}

// An app-limited decision holds the rate but never above what was delivered, times the probe gain: the next job's
// data then does not arrive at the line rate on top of what the host already delivers.
TEST(PeerPacerTest, AppLimitedDecisionCapsTheRateNearTheDeliveredRate) {
  PeerPacer p(kRmax, kFrame, 100 * kUs);
  ASSERT_DOUBLE_EQ(p.rate(), kRmax) << "no measurement yet: the line rate";
  // A trickle: one datagram every 200 us (7.57 MB/s), all acknowledged; the pacer sits idle in between.
  TimeNs t = 0;
  for (int i = 0; i < 20; ++i, t += 200 * kUs) p.on_sent(t, kFrame);
  resolve(p, 1 * kMs, 3 * kMs, 9, 0);  // 10 acknowledged in 2 ms
  ASSERT_EQ(p.decisions(), 1u);
  EXPECT_DOUBLE_EQ(p.rate(), PeerPacer::kProbeGain * 10 * kFrame * 1e9 / double(2 * kMs));
  // Another app-limited, lossless decision delivering more may not raise it.
  const double capped = p.rate();
  for (int i = 0; i < 5; ++i, t += 400 * kUs) p.on_sent(t, kFrame);
  resolve(p, 3 * kMs, 5 * kMs, 19, 0);
  EXPECT_DOUBLE_EQ(p.rate(), capped) << "held";
}

// Lossy: down to the delivered rate. Backlogged and lossless: up by the probe gain per decision (up to the line
// rate). Everything lost: the floor.
TEST(PeerPacerTest, FallsToTheDeliveredRateOnLossAndProbesWhenBacklogged) {
  PeerPacer p(kRmax, kFrame, 100 * kUs);
  while (p.next_send() < 2 * kMs) p.on_sent(p.next_send(), kFrame);  // backlogged from the start
  resolve(p, 0, 2 * kMs, 30, 10);                                    // 31 of 41 acknowledged in 2 ms
  const double delivered = 31 * kFrame * 1e9 / double(2 * kMs);
  ASSERT_DOUBLE_EQ(p.rate(), delivered);
  // Backlogged: the sender sends whenever allowed, and each decision delivers what the rate sent.
  TimeNs t = 2 * kMs;
  for (int d = 0; d < 3; ++d) {
    const double before = p.rate();
    while (p.next_send() < t + 2 * kMs) p.on_sent(std::max(t, p.next_send()), kFrame);
    const int n = static_cast<int>(before * 2e-3 / kFrame);  // what the rate delivers in 2 ms
    resolve(p, t + 1, t + 2 * kMs, n - 1, 0);
    EXPECT_DOUBLE_EQ(p.rate(), std::min(kRmax, PeerPacer::kProbeGain * n * kFrame * 1e9 / double(2 * kMs - 1)))
        << "decision " << d;
    t += 2 * kMs;
  }
  resolve(p, t + 1, t + 2 * kMs, 0, 20);  // one acknowledged of 21
  EXPECT_DOUBLE_EQ(p.rate(), p.floor());
  EXPECT_DOUBLE_EQ(p.floor(), kRmax / 32);
}

// A decision needs kMinResolved packets or two intervals; a late acknowledgement takes a loss back.
TEST(PeerPacerTest, DecisionsWaitForEvidenceAndLateAcksUndoLosses) {
  PeerPacer p(kRmax, kFrame, 100 * kUs);
  for (int i = 0; i < 3; ++i) p.on_resolved(TimeNs(i) * 500 * kUs, i != 0, kFrame, kSrtt);  // 3 packets in 1 ms
  EXPECT_EQ(p.decisions(), 0u) << "one interval, 3 packets: not yet";
  p.on_late_ack(kFrame);                        // the lost one arrived after all
  p.on_resolved(2 * kMs, true, kFrame, kSrtt);  // two intervals
  EXPECT_EQ(p.decisions(), 1u);
  EXPECT_LT(p.rate(), kRmax) << "no loss left: app-limited, capped at the gain x 4 datagrams in 2 ms";
  EXPECT_DOUBLE_EQ(p.rate(), std::max(PeerPacer::kProbeGain * 4 * kFrame * 1e9 / double(2 * kMs), p.floor()));
}

namespace {
// One Full engine (10 Gbit/s: the host pacer's 50 us allow 42 datagrams) with eight sessions to the same peer, each
// with a 40-message approximate job of one-datagram messages started at the same instant; counts the DATA datagrams
// poll_transmit hands out at that instant.
int data_datagrams_at_one_instant(bool peer_pacing) {
  EngineConfig c;
  c.approx_peer_pacing = peer_pacing;
  c.coalesce_messages = false;
  Engine e(c);
  uint8_t key[kKeyBytes] = {1};
  const TimeNs now = 10 * kMs;
  std::vector<uint8_t> msg(1400, 7);
  for (SessionId s = 1; s <= 8; ++s) {
    key[1] = uint8_t(s);
    EXPECT_EQ(e.open_session(s, key, /*peer=*/9, true, now), Status::kOk);
    EXPECT_EQ(e.start_job(s, JobSpec{1, {{1, 40, 0.75}}, true}, now), Status::kOk);
    for (uint32_t i = 0; i < 40; ++i) EXPECT_EQ(e.submit(s, 1, 0, i, msg.data(), msg.size(), now), Status::kOk);
  }
  std::vector<uint8_t> buf(c.max_datagram);
  int data = 0;
  Transmit t;
  for (int i = 0; i < 1000 && e.poll_transmit(now, buf.data(), buf.size(), &t); ++i)
    data += t.dscp != c.dscp_by_class[0];  // approximate class: DATA (control frames go in class 0)
  return data;
}
}  // namespace

// Eight jobs to one peer started together: with the peer pacer their approximate DATA leaves in a burst of three
// datagrams, without it one datagram per job (each job's own pacer starts at `now`).
TEST(PeerPacerTest, JobsToOnePeerShareOneBurstAllowance) {
  const int paced = data_datagrams_at_one_instant(true);
  const int unpaced = data_datagrams_at_one_instant(false);
  EXPECT_EQ(paced, 3);
  EXPECT_EQ(unpaced, 8);
}
