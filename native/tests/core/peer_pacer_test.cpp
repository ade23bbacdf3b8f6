// The per-peer pacer of approximate-class DATA (core/peer_pacer.hpp; docs/protocol.md section 10, "Peer pacer"): its
// delivery-rate model against a deterministic one-link path, then in an engine whose jobs to one peer start together.
#include "core/peer_pacer.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <vector>

#include "core/engine.hpp"

using namespace netapprox::atp;

namespace {
constexpr TimeNs kUs = 1'000;
constexpr TimeNs kMs = 1'000'000;
constexpr double kRmax = 2.5e7;  // 200 Mbit/s in bytes per second
constexpr double kFrame = 1514;  // 1472 + 42
constexpr TimeNs kRtt = 1 * kMs;

// One sender's pacer through one bottleneck link of `capacity` bytes/s with a drop-tail queue of `queue` frames and
// a base RTT of kRtt: each packet arrives at the link kRtt/2 after its send, leaves it at the link's rate, and its
// fate reaches the pacer kRtt/2 later (a loss: when its successor's ack would have come, as loss detection does).
// `drop(n)` may drop the n-th packet on top of the queue (a service gap of the class). The sender is backlogged
// unless `gap` is set: then it sends one frame every `gap` (app-limited).
struct Path {
  PeerPacer pacer{kRmax, kFrame, 100 * kUs};
  double capacity = 1e7;
  int queue = 1000;
  TimeNs gap = 0;
  std::function<bool(uint64_t)> drop = [](uint64_t) { return false; };

  TimeNs now = 0, link_free = 0, next_app = 0;
  uint64_t sent = 0, lost = 0;
  std::vector<TimeNs> departures;  // of the packets still in the link's queue
  struct Fate {
    bool acked;
    TimeNs sent;
    DeliveryStamp stamp;
  };
  std::multimap<TimeNs, Fate> fates;

  void send(TimeNs t) {
    const DeliveryStamp st = pacer.on_sent(t, kFrame);
    const TimeNs arrive = t + kRtt / 2;
    while (!departures.empty() && departures.front() <= arrive) departures.erase(departures.begin());
    const bool dropped = drop(sent++) || int(departures.size()) >= queue;
    if (dropped) {
      lost++;
      fates.emplace(arrive + kRtt / 2 + TimeNs(kFrame * 1e9 / capacity), Fate{false, t, st});
      return;
    }
    link_free = std::max(link_free, arrive) + TimeNs(kFrame * 1e9 / capacity);
    departures.push_back(link_free);
    fates.emplace(link_free + kRtt / 2, Fate{true, t, st});
  }

  // Runs until `until`: sends when the pacer (and, app-limited, the application) allows, delivers fates in order.
  void run(TimeNs until) {
    while (now < until) {
      TimeNs next_send = std::max(pacer.next_send(), now);
      if (gap > 0) next_send = std::max(next_send, next_app);
      const TimeNs next_fate = fates.empty() ? kNever : fates.begin()->first;
      now = std::min({next_send, next_fate, until});
      if (now == until) break;
      if (next_fate <= next_send) {
        const Fate f = fates.begin()->second;
        fates.erase(fates.begin());
        if (f.acked)
          pacer.on_acked(now, f.sent, f.stamp, kFrame, kRtt);
        else
          pacer.on_lost(now, kFrame, kRtt);
      } else {
        send(now);
        if (gap > 0) next_app = now + gap;
      }
    }
  }
};
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
  EXPECT_EQ(p.allowance(), TimeNs(2 * kFrame * 1e9 / p.rate()));
}

// It starts at a share, not at the floor nor at the line rate: R_max / 4 as the estimate, paced at the startup gain.
TEST(PeerPacerTest, StartsAtAShareOfTheLineRate) {
  PeerPacer p(kRmax, kFrame, 100 * kUs);
  EXPECT_TRUE(p.in_startup());
  EXPECT_DOUBLE_EQ(p.estimate(), kRmax * PeerPacer::kStartFraction);
  EXPECT_DOUBLE_EQ(p.rate(), PeerPacer::kStartupGain * kRmax * PeerPacer::kStartFraction);
  EXPECT_GT(p.rate(), p.floor());
}

// A backlogged sender: the estimate finds the bottleneck, follows it up when it doubles (by the probe phases) and down
// when it falls to a quarter (once the max filter's window has passed).
TEST(PeerPacerTest, EstimateFollowsAStepChangeInCapacityUpAndDown) {
  Path path;
  path.capacity = 1e7;  // 80 Mbit/s
  path.queue = 20;      // without a window, a deep queue would stretch the rounds the filter counts
  path.run(200 * kMs);
  EXPECT_FALSE(path.pacer.in_startup()) << "the estimate stopped growing: startup is over";
  EXPECT_NEAR(path.pacer.estimate(), 1e7, 0.15e7);

  path.capacity = 2e7;
  path.run(600 * kMs);
  EXPECT_NEAR(path.pacer.estimate(), 2e7, 0.3e7) << "up: probed";

  path.capacity = 0.5e7;
  const uint64_t round = path.pacer.round();
  path.run(700 * kMs);
  EXPECT_GT(path.pacer.round(), round + PeerPacer::kFilterRounds);
  EXPECT_NEAR(path.pacer.estimate(), 0.5e7, 0.1e7) << "down: the old maximum left the window";
  EXPECT_GT(path.pacer.rate(), path.pacer.floor());
}

// Samples taken while the pacer had nothing to send say what the jobs had, not what the path takes: however long
// the sender trickles, the estimate stays.
TEST(PeerPacerTest, AppLimitedIntervalsNeverLowerTheEstimate) {
  Path path;
  path.capacity = 1e7;
  path.run(200 * kMs);
  const double estimate = path.pacer.estimate();
  ASSERT_NEAR(estimate, 1e7, 0.15e7);
  path.gap = 1 * kMs;  // one frame per ms: 1.5 MB/s, a seventh of the path
  const uint64_t round = path.pacer.round();
  path.run(1200 * kMs);
  EXPECT_GT(path.pacer.round(), round + 10 * PeerPacer::kFilterRounds) << "many rounds passed";
  EXPECT_GE(path.pacer.estimate(), estimate);
  EXPECT_EQ(path.pacer.bound(), 0);
}

// One interval of heavy loss (a burst of another host, or a class-0 burst in front of the class) is not overload:
// no bound, the same estimate.
TEST(PeerPacerTest, OneIntervalOfLossDoesNotCutTheRate) {
  Path path;
  path.capacity = 1e7;
  path.run(200 * kMs);
  const double estimate = path.pacer.estimate();
  const uint64_t from = path.sent;
  path.drop = [from](uint64_t n) { return n >= from && n < from + 8; };  // ~1 ms of packets, all lost
  const uint64_t cycles = path.pacer.cycles();
  path.run(260 * kMs);
  EXPECT_EQ(path.lost, 8u);
  EXPECT_GE(path.pacer.cycles(), cycles + 2) << "the cycle with the burst ended, and another";
  EXPECT_EQ(path.pacer.bound(), 0);
  EXPECT_NEAR(path.pacer.estimate(), estimate, 0.1 * estimate);
}

// Sustained overload: the path falls to a third while its queue holds 6 frames. The max filter still remembers the
// old capacity, the pacer overruns the queue for a whole cycle, and the bound cuts the rate before the filter's
// window has passed; the loss answers the cut, so it stays.
TEST(PeerPacerTest, SustainedOverloadCutsTheRate) {
  Path path;
  path.capacity = 1.2e7;
  path.queue = 6;
  path.run(200 * kMs);
  ASSERT_EQ(path.pacer.bound(), 0);
  const double before = path.pacer.rate();
  path.capacity = 0.4e7;
  bool cut = false;
  double lowest = before;
  for (TimeNs t = 201 * kMs; t < 260 * kMs; t += 1 * kMs) {
    path.run(t);
    if (path.pacer.bound() > 0) cut = true;
    lowest = std::min(lowest, path.pacer.rate());
  }
  EXPECT_TRUE(cut);
  EXPECT_LE(lowest, PeerPacer::kBeta * before * 1.01);
}

// Loss that stays whatever the rate (a class served only between another class's bursts) is a service gap: a cut is
// tried, its next cycle loses as much, and the cut is undone - the rate does not ratchet down to the floor.
TEST(PeerPacerTest, LossThatDoesNotAnswerTheCutIsAServiceGap) {
  Path path;
  path.capacity = 1e7;
  path.run(200 * kMs);
  const double estimate = path.pacer.estimate();
  // A sixth, at every rate: above kLossThreshold, but below what the probe gain makes up for (1.25 x 5/6 > 1:
  // above 1 - 1 / 1.25 = 20 % the delivery-rate samples themselves fall, as BBR's do).
  path.drop = [](uint64_t n) { return n % 6 == 0; };
  bool cut = false;
  for (TimeNs t = 201 * kMs; t < 600 * kMs; t += 1 * kMs) {
    path.run(t);
    cut = cut || path.pacer.bound() > 0;
  }
  EXPECT_TRUE(cut) << "a cut was tried";
  EXPECT_GT(path.pacer.rate(), 0.5 * estimate) << "and undone";
  EXPECT_GT(path.pacer.rate(), 4 * path.pacer.floor());
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
