// The rate law and the priority classes on the simulated incast fabric (fabric.hpp): the default law's equilibrium
// on a tiny queue, and no starvation between approximate classes.
#include "fabric.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>

#include "core/slack.hpp"

using namespace netapprox::atp;

namespace {
constexpr TimeNs kMs = 1'000'000;

fabric::Config config(int senders, double host_bps, double port_bps, Mode mode) {
  fabric::Config c;
  c.senders = senders;
  c.host_rate_bps = host_bps;
  c.port_rate_bps = port_bps;
  c.host_delay = 50'000;  // base RTT 200 us
  c.engine.line_rate_bps = static_cast<uint64_t>(host_bps);
  c.engine.mode = mode;
  c.engine.peer_death_timeout = 20'000'000'000ULL;
  return c;
}
}  // namespace

// One job through a 200 Mbit/s port with a 6-frame queue (its class), from a host 5x faster (R_max = 1 Gbit/s):
// the slack law settles at a packet loss near the job's TLR (0.25 for MSR 0.75 and one-packet messages) with the
// port busy, i.e. at about the port's rate / (1 - TLR). The paper's law (eq. 2 steps of m (R_max - R)) overshoots
// the tiny queue further. Deterministic: the fabric has no random loss.
TEST(FabricTest, SlackLawSettlesNearTheTlrOnATinyQueue) {
  double loss[2];
  for (int law = 0; law < 2; ++law) {
    fabric::Fabric f(config(1, 1e9, 200e6, law == 0 ? Mode::kFull : Mode::kPaper), 3);
    std::shared_ptr<const JobReport> rep;
    f.on_sender_event = [&](int, Event& e) {
      if (e.type == EventType::kJobDone) rep = e.report;
    };
    constexpr uint32_t kMessages = 20000;
    std::vector<uint8_t> payload(1000, 1);
    ASSERT_EQ(f.sender(0).start_job(fabric::Fabric::session_of(0), JobSpec{1, {{1, kMessages, 0.75}}, true}, f.now()),
              Status::kOk);
    for (uint32_t i = 0; i < kMessages; ++i)
      ASSERT_EQ(f.sender(0).submit(fabric::Fabric::session_of(0), 1, 0, i, payload.data(), payload.size(), f.now()),
                Status::kOk);
    const TimeNs t0 = f.now();
    ASSERT_TRUE(f.run([&] { return rep != nullptr; }, t0 + 10'000 * kMs));
    ASSERT_EQ(rep->status, Status::kOk);
    loss[law] = rep->measured_loss;
    // The port: the target's wire bytes (1000 + 102 per message) at 200 Mbit/s take 661 ms.
    const double ideal_ms = 15000.0 * 1102 * 8 / 200e6 * 1e3;
    const double jct_ms = double(rep->finished - rep->started) / 1e6;
    EXPECT_LT(jct_ms, ideal_ms * 1.05) << (law == 0 ? "slack" : "paper") << ": the port must stay busy";
    EXPECT_GT(double(f.port().busy) / double(f.now() - t0), 0.95);
  }
  EXPECT_NEAR(loss[0], 0.25, 0.05) << "slack law: loss near TLR_pkt";
  // The paper's law loses about as much or more (0.27 vs 0.28 since the slack law undoes a cut that did not lower
  // the loss, docs/protocol.md section 10; 0.25 before).
  EXPECT_GT(loss[1], loss[0] - 0.02) << "the paper's law loses about as much or more";
}

// Was: the MSR-0.5 job (class 4) delivered nothing for the first 200 ms (it only climbed as losses drained its
// allowance); the MSR-0.75 job 11 messages in 50 ms.
TEST(FabricTest, EveryClassProgressesWhileAHigherOneIsSaturated) {
  for (Mode mode : {Mode::kFull, Mode::kPaper}) {
    // No starvation between approximate classes (NetApprox Fig. 13-like): three jobs of different MSR start
    // together through a strict-priority bottleneck with the slack queue plan. The MSR-0.9 job's class (1)
    // saturates the port; the others must still make progress, and every group meets its target.
    fabric::Fabric f(config(3, 200e6, 200e6, mode), 7);
    const double msr[3] = {0.9, 0.75, 0.5};
    constexpr uint32_t kMessages = 5000;
    uint32_t delivered[3] = {};
    std::shared_ptr<const JobReport> reports[3];
    f.on_receiver_event = [&](Event& e) {
      if (e.type == EventType::kMessage) delivered[e.session - fabric::Fabric::session_of(0)]++;
    };
    f.on_sender_event = [&](int s, Event& e) {
      if (e.type == EventType::kJobDone) reports[s] = e.report;
    };
    std::vector<uint8_t> payload(1000, 7);
    for (int s = 0; s < 3; ++s) {
      ASSERT_EQ(
          f.sender(s).start_job(fabric::Fabric::session_of(s), JobSpec{1, {{1, kMessages, msr[s]}}, true}, f.now()),
          Status::kOk);
      for (uint32_t i = 0; i < kMessages; ++i)
        ASSERT_EQ(f.sender(s).submit(fabric::Fabric::session_of(s), 1, 0, i, payload.data(), payload.size(), f.now()),
                  Status::kOk);
    }
    const TimeNs t0 = f.now();
    // Together the jobs need ~8.4 MB (target messages x wire bytes): 340 ms at 200 Mbit/s. In every 50 ms window
    // until the first job is done, every job delivers.
    uint32_t before[3] = {};
    for (int w = 1; !reports[0] && w <= 20; ++w) {
      f.run([] { return false; }, t0 + TimeNs(w) * 50 * kMs);
      if (reports[0]) break;
      for (int s = 0; s < 3; ++s) {
        EXPECT_GT(delivered[s], before[s])
            << mode_name(mode) << ": job " << s << " (MSR " << msr[s] << ") starved in window " << w;
        before[s] = delivered[s];
      }
    }
    ASSERT_TRUE(f.run([&] { return reports[0] && reports[1] && reports[2]; }, t0 + 5000 * kMs)) << mode_name(mode);
    for (int s = 0; s < 3; ++s) {
      EXPECT_EQ(reports[s]->status, Status::kOk);
      EXPECT_GE(reports[s]->delivered, static_cast<uint32_t>(std::ceil(msr[s] * kMessages - 1e-9)));
    }
  }
}

// R_max is the host's line rate, and the line carries each datagram's UDP/IP/Ethernet headers too. Was: the host
// pacer spent only the UDP payload at R_max, so a host sending 200-byte messages (302 bytes on the wire) at its
// line rate overran its own uplink by 14 % and the uplink queue grew without bound: in the network lab (a
// 1000-frame host queue) ANNOUNCEs of new jobs waited up to 145 ms in it behind the host's own data, with probe
// copies after 2.2 ms, 4.4 ms, ... (45-69 of 90 FBKV-like jobs sent their ANNOUNCE 2-6 times). Here a second job
// starts 100 ms into a long job of small messages on the same host: before the fix its ANNOUNCE waited ~14 ms.
TEST(FabricTest, HostPacingCountsTheWireOverheadSoNewJobsStartAtOnce) {
  fabric::Config c = config(1, 200e6, 200e6, Mode::kFull);
  c.slack_queues = false;
  fabric::Fabric f(c, 5);
  std::shared_ptr<const JobReport> reports[2];
  f.on_sender_event = [&](int, Event& e) {
    if (e.type == EventType::kJobDone) reports[e.job - 1] = e.report;
  };
  const SessionId sid = fabric::Fabric::session_of(0);
  constexpr uint32_t kMessages = 40000;  // 0.48 s at the line rate
  std::vector<uint8_t> payload(200, 3);
  ASSERT_EQ(f.sender(0).start_job(sid, JobSpec{1, {{1, kMessages, 1.0}}, true}, f.now()), Status::kOk);
  for (uint32_t i = 0; i < kMessages; ++i)
    ASSERT_EQ(f.sender(0).submit(sid, 1, 0, i, payload.data(), payload.size(), f.now()), Status::kOk);
  f.run([] { return false; }, f.now() + 100 * kMs);
  ASSERT_EQ(reports[0], nullptr) << "the first job must still be running";
  ASSERT_EQ(f.sender(0).start_job(sid, JobSpec{2, {{2, 1, 1.0}}, true}, f.now()), Status::kOk);
  ASSERT_EQ(f.sender(0).submit(sid, 2, 0, 0, payload.data(), payload.size(), f.now()), Status::kOk);
  ASSERT_TRUE(f.run([&] { return reports[0] && reports[1]; }, f.now() + 10'000 * kMs));
  EXPECT_EQ(reports[1]->announces_sent, 1u) << "no probe copy: the announce did not wait in the host's queue";
  EXPECT_LT(reports[1]->start_to_running, 2 * kMs) << "base RTT 0.2 ms";
  // The first job still used the line: its wire bytes (302 per message) at 200 Mbit/s take 483 ms.
  const double jct_ms = double(reports[0]->finished - reports[0]->started) / 1e6;
  EXPECT_LT(jct_ms, 483.2 * 1.05);
}

namespace {
// JCTs (ms) of `senders` FBHD-like jobs (MSR 0.75, 24 messages of 27 packets) started together through the slack
// queue plan while a class-0 background sends 2 ms bursts at the port's rate, 0.3 of the port on average.
std::vector<double> jobs_behind_class0_bursts(Mode mode, double needy_fraction, int senders,
                                              uint32_t repair_after = EngineConfig{}.repair_after_segments) {
  fabric::Config c = config(senders, 200e6, 200e6, mode);
  c.bg_load = 0.3;
  c.bg_on = 2 * kMs;
  c.engine.needy_class0_fraction = needy_fraction;
  c.engine.repair_after_segments = repair_after;
  fabric::Fabric f(c, 11);
  std::vector<double> jct;
  f.on_sender_event = [&](int, Event& e) {
    if (e.type != EventType::kJobDone) return;
    EXPECT_EQ(e.report->status, Status::kOk);
    EXPECT_GE(e.report->delivered, 18u);
    jct.push_back(double(e.report->finished - e.report->started) / 1e6);
  };
  constexpr uint32_t kMessages = 24;
  std::vector<uint8_t> payload(39536, 9);
  for (int s = 0; s < senders; ++s) {
    const SessionId sid = fabric::Fabric::session_of(s);
    EXPECT_EQ(f.sender(s).start_job(sid, JobSpec{1, {{1, kMessages, 0.75}}, true}, f.now()), Status::kOk);
    for (uint32_t i = 0; i < kMessages; ++i)
      EXPECT_EQ(f.sender(s).submit(sid, 1, 0, i, payload.data(), payload.size(), f.now()), Status::kOk);
  }
  EXPECT_TRUE(f.run([&] { return int(jct.size()) == senders; }, f.now() + 20'000 * kMs)) << mode_name(mode);
  std::sort(jct.begin(), jct.end());
  return jct;
}
}  // namespace

// Needy jobs (docs/protocol.md section 11): with strict priority, class 0's bursts stop every approximate queue, and
// a 6-7-frame queue drops what arrives meanwhile (here ~40 % of the packets of 27-packet messages, whatever the
// rate). A job whose allowance is spent must then repair every message in that same queue. Since the fix such a job
// sends in class 0 once it needs at most needy_class0_fraction of its target. Measured against RC+MRDF (the same
// law and scheduling with every packet in class 0), in simulated time: was Full p50 338 ms vs 184 ms (1.83x) with 4
// senders; now 211 ms (1.15x). The run with the rule off (fraction 0: the old class logic) shows the scenario still
// reproduces the problem. Run with the paper's give-up rule (repair_after_segments 0): the needy rule applies to a
// job whose allowance is spent, and with repairs (the default since 2026-11-25) these jobs of 27-packet messages
// never spend it; they are needy on the fraction alone instead (docs/protocol.md sections 5, 11): Full 234 ms,
// RC+MRDF 169 ms here (without that needy rule Full repaired in class 1 for its whole life: 309 ms).
TEST(FabricTest, NeedyJobsAreNotParkedBehindClassZeroBursts) {
  const double defaults = EngineConfig{}.needy_class0_fraction;
  const std::vector<double> rc = jobs_behind_class0_bursts(Mode::kRcMrdf, defaults, 4, 0);
  const std::vector<double> full = jobs_behind_class0_bursts(Mode::kFull, defaults, 4, 0);
  const std::vector<double> off = jobs_behind_class0_bursts(Mode::kFull, 0.0, 4, 0);
  ASSERT_EQ(rc.size(), 4u);
  ASSERT_EQ(full.size(), 4u);
  ASSERT_EQ(off.size(), 4u);
  EXPECT_LT(full[2], 1.3 * rc[2]) << "Full p50 " << full[2] << " ms, RC+MRDF " << rc[2] << " ms";
  EXPECT_GT(off[2], 1.5 * rc[2]) << "without the rule: " << off[2] << " ms";
}

namespace {
// Sender 0 (hosts at 1 Gbit/s, port 200 Mbit/s) runs exact 1 MB jobs with 30 ms pauses through a FIFO port, so the
// queue fills (~6 ms) and drains again; sender 1 starts a 20-message job every 7 ms, each on a session of its own
// (opened just before, closed when the job is done: the network lab's agents) or all on one. Returns how many of
// sender 1's 60 jobs sent their ANNOUNCE more than once.
int announces_repeated_next_to_a_filling_queue(bool fresh_sessions) {
  fabric::Config c = config(2, 1e9, 200e6, Mode::kFull);
  c.slack_queues = false;
  fabric::Fabric f(c, 17);
  int repeated = 0, small_done = 0, big_done = 0;
  TimeNs max_start = 0;
  std::vector<SessionId> to_close;
  f.on_sender_event = [&](int s, Event& e) {
    if (e.type != EventType::kJobDone) return;
    EXPECT_EQ(e.report->status, Status::kOk);
    if (s == 1) {
      small_done++;
      repeated += e.report->announces_sent > 1;
      max_start = std::max(max_start, e.report->start_to_running);
      if (fresh_sessions) to_close.push_back(e.session);
    } else {
      big_done++;
    }
  };
  std::vector<uint8_t> big(40000, 1), small(1000, 2);
  constexpr uint32_t kSmall = 20;
  JobId next_big = 1, next_small = 1;
  TimeNs next_big_at = f.now(), next_small_at = f.now() + 3 * kMs;
  const TimeNs end = f.now() + 420 * kMs;
  bool big_running = false;
  uint8_t key[kKeyBytes] = {7};
  while (f.now() < end) {
    if (!big_running && f.now() >= next_big_at) {
      const SessionId sid = fabric::Fabric::session_of(0);
      EXPECT_EQ(f.sender(0).start_job(sid, JobSpec{next_big, {{1, 25, 1.0}}, true}, f.now()), Status::kOk);
      for (uint32_t i = 0; i < 25; ++i)
        EXPECT_EQ(f.sender(0).submit(sid, next_big, 0, i, big.data(), big.size(), f.now()), Status::kOk);
      next_big++;
      big_running = true;
    }
    if (f.now() >= next_small_at) {
      SessionId sid = fabric::Fabric::session_of(1);
      if (fresh_sessions) {  // a new session to the same peer, as the lab's agent opens one per job
        sid = 0x7000'0000 + next_small;
        EXPECT_EQ(f.sender(1).open_session(sid, key, fabric::Fabric::kReceiverPeer, true, f.now()), Status::kOk);
        EXPECT_EQ(f.receiver().open_session(sid, key, PeerId(1), false, f.now()), Status::kOk);
      }
      EXPECT_EQ(f.sender(1).start_job(sid, JobSpec{next_small, {{1, kSmall, 1.0}}, true}, f.now()), Status::kOk);
      for (uint32_t i = 0; i < kSmall; ++i)
        EXPECT_EQ(f.sender(1).submit(sid, next_small, 0, i, small.data(), small.size(), f.now()), Status::kOk);
      next_small++;
      next_small_at += 7 * kMs;
    }
    const int before = big_done;
    f.run([&] { return big_done > before || !to_close.empty(); },
          std::min(next_small_at, big_running ? end : next_big_at));
    for (SessionId sid : to_close) f.sender(1).close_session(sid, f.now());
    to_close.clear();
    if (big_done > before) {
      big_running = false;
      next_big_at = f.now() + 30 * kMs;
    }
  }
  EXPECT_TRUE(f.run([&] { return small_done == int(next_small) - 1; }, f.now() + 1000 * kMs));
  std::printf("%s: %d of %d small jobs sent their ANNOUNCE more than once (longest start %.2f ms); %d big jobs\n",
              fresh_sessions ? "a session per job" : "one session", repeated, small_done, double(max_start) / 1e6,
              big_done);
  return repeated;
}
}  // namespace

// A new session starts its probe timeout from the peak RTT other sessions to the same peer saw (Recovery::pto,
// docs/protocol.md section 3). With a session per job (the network lab's agents) every session's first PTO was 2.2 ms
// (initial_rtt, no sample) against a 6 ms full queue: 38 of 60 jobs sent their ANNOUNCE more than once; now 1. On one
// long-lived session the PTO stays RFC 9002's (6 of 60: its srtt settles while the queue is empty; a floor from the
// peak there cost repairs behind class-0 bursts, FabricTest.NeedyJobsAreNotParkedBehindClassZeroBursts, and was
// dropped) - printed for comparison, not bounded.
TEST(FabricTest, AnnouncesAreNotProbedWhileTheyWaitInAQueueThePathHadBefore) {
  announces_repeated_next_to_a_filling_queue(false);
  EXPECT_LE(announces_repeated_next_to_a_filling_queue(true), 3);
}

namespace {
// p50 JCT (ms) of 30 FBKV-like jobs (500 messages of 300 B, MSR 0.75) arriving as a Poisson process at 0.8 of the
// port from 3 senders (picked at random) through the slack queue plan while a class-0 background sends 100 us bursts
// at the port's rate, 0.3 of the port (incast-sim's FBKV shape, docs/protocol.md section 17 item 1), with
// EngineConfig::small_job_class0_bytes = `small`. Every job must meet its target.
double fbkv_behind_class0_bursts(uint64_t small, uint64_t seed) {
  fabric::Config c = config(3, 200e6, 200e6, Mode::kFull);
  c.host_delay = 25'000;  // base RTT 100 us
  c.bg_load = 0.3;
  c.bg_on = 100'000;
  c.engine.small_job_class0_bytes = small;
  fabric::Fabric f(c, seed);
  constexpr uint32_t kMessages = 500, kJobs = 30;
  std::vector<double> jct;
  f.on_sender_event = [&](int, Event& e) {
    if (e.type != EventType::kJobDone) return;
    EXPECT_EQ(e.report->status, Status::kOk);
    EXPECT_GE(e.report->delivered, 375u);
    jct.push_back(double(e.report->finished - e.report->started) / 1e6);
  };
  std::vector<uint8_t> payload(300, 7);
  std::mt19937_64 rng(seed);
  const double mean_gap_s = double(kMessages) * 300 * 8 / (0.8 * c.port_rate_bps);
  for (JobId id = 1; id <= kJobs; ++id) {
    const TimeNs gap = TimeNs(std::exponential_distribution<double>(1.0 / mean_gap_s)(rng) * 1e9);
    f.run([] { return false; }, f.now() + gap);
    const int s = int(rng() % 3);
    const SessionId sid = fabric::Fabric::session_of(s);
    EXPECT_EQ(f.sender(s).start_job(sid, JobSpec{id, {{1, kMessages, 0.75}}, true}, f.now()), Status::kOk);
    for (uint32_t i = 0; i < kMessages; ++i)
      EXPECT_EQ(f.sender(s).submit(sid, id, 0, i, payload.data(), payload.size(), f.now()), Status::kOk);
  }
  EXPECT_TRUE(f.run([&] { return jct.size() == kJobs; }, f.now() + 20'000 * kMs));
  std::sort(jct.begin(), jct.end());
  return jct.empty() ? 0 : jct[jct.size() / 2];
}
}  // namespace

// Size-aware class (docs/protocol.md section 11, "small jobs"): FBKV-like jobs (~110 KB needed each) with their
// allowance left sat in class 2, a 6-frame queue that strict priority stops during every class-0 burst, and paid for
// it in losses and then in class 1. With the default small_job_class0_bytes they send in class 0 and finish sooner:
// faster in at least 4 of 5 seeds.
TEST(FabricTest, SmallJobsFinishSoonerInClassZeroBehindBursts) {
  ASSERT_GT(EngineConfig{}.small_job_class0_bytes, 0u) << "on by default (docs/protocol.md section 11)";
  int faster = 0;
  std::string detail;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const double on = fbkv_behind_class0_bursts(EngineConfig{}.small_job_class0_bytes, seed);
    const double off = fbkv_behind_class0_bursts(0, seed);
    faster += on < off;
    detail += " " + std::to_string(on) + "/" + std::to_string(off);
  }
  EXPECT_GE(faster, 4) << "p50 on/off per seed (ms):" << detail;
}

namespace {
// p50 JCT (ms) of 60 jobs of mixed sizes (20 to 320 messages of 1400 B, MSR 0.75) arriving as a Poisson process at
// 0.8 of the port from 4 senders (picked at random) through the slack queues with dynamic thresholds for the
// approximate classes (the simulator's switch), in Full with EngineConfig::size_classes = `by_size`. Every job must
// meet its target.
double mixed_sizes_p50(bool by_size, uint64_t seed) {
  fabric::Config c = config(4, 200e6, 200e6, Mode::kFull);
  c.host_delay = 25'000;  // base RTT 100 us
  c.approx_alpha = 1;
  c.engine.size_classes = by_size;
  c.engine.size_class_bytes[0] = 32 << 10;  // 5 frames' worth of bytes per class step at this rate
  c.engine.size_class_bytes[1] = 64 << 10;
  c.engine.size_class_bytes[2] = 128 << 10;
  c.engine.size_class_bytes[3] = 192 << 10;
  c.engine.size_class_bytes[4] = 256 << 10;
  c.engine.size_class_bytes[5] = 384 << 10;
  fabric::Fabric f(c, seed);
  constexpr uint32_t kJobs = 60;
  std::vector<double> jct;
  std::map<JobId, uint32_t> target;
  f.on_sender_event = [&](int, Event& e) {
    if (e.type != EventType::kJobDone) return;
    EXPECT_EQ(e.report->status, Status::kOk);
    EXPECT_GE(e.report->delivered, target[e.job]);
    jct.push_back(double(e.report->finished - e.report->started) / 1e6);
  };
  std::vector<uint8_t> payload(1400, 7);
  std::mt19937_64 rng(seed);
  const double mean_gap_s = 170.0 * 1400 * 8 / (0.8 * c.port_rate_bps);
  for (JobId id = 1; id <= kJobs; ++id) {
    const TimeNs gap = TimeNs(std::exponential_distribution<double>(1.0 / mean_gap_s)(rng) * 1e9);
    f.run([] { return false; }, f.now() + gap);
    const int s = int(rng() % 4);
    const uint32_t n = 20u << (rng() % 5);  // 20, 40, 80, 160 or 320 messages
    target[id] = (3 * n + 3) / 4;
    const SessionId sid = fabric::Fabric::session_of(s);
    EXPECT_EQ(f.sender(s).start_job(sid, JobSpec{id, {{1, n, 0.75}}, true}, f.now()), Status::kOk);
    for (uint32_t i = 0; i < n; ++i)
      EXPECT_EQ(f.sender(s).submit(sid, id, 0, i, payload.data(), payload.size(), f.now()), Status::kOk);
  }
  EXPECT_TRUE(f.run([&] { return jct.size() == kJobs; }, f.now() + 20'000 * kMs));
  std::sort(jct.begin(), jct.end());
  return jct.empty() ? 0 : jct[jct.size() / 2];
}
}  // namespace

// Remaining-size classes (docs/protocol.md section 11, "size classes"): jobs of mixed sizes sharing a port are served
// closest-to-done first everywhere instead of by their TLR (which is the same for every job of one MSR, so the
// paper's classes share the port between them, and Full's class-0 rules put the small ones and every job's last
// quarter in one FIFO): the median job finishes sooner, in at least 4 of 5 seeds.
TEST(FabricTest, SizeClassesFinishTheMedianJobSoonerOnADynamicThresholdSwitch) {
  int faster = 0;
  std::string detail;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const double on = mixed_sizes_p50(true, seed);
    const double off = mixed_sizes_p50(false, seed);
    faster += on < off;
    detail += " " + std::to_string(on) + "/" + std::to_string(off);
  }
  std::printf("size classes on/off p50 (ms) per seed:%s\n", detail.c_str());
  EXPECT_GE(faster, 4) << "p50 on/off per seed (ms):" << detail;
}

namespace {
struct DeadlineRun {
  bool done = false;           // the sender's job ended (every group met its target)
  uint32_t delivered[2] = {};  // messages per group at the receiver
  TimeNs longest_wait = 0;     // longest a group short of its target went without a delivery (from the job's start)
  TimeNs class0 = 0;           // the job's time in class 0 (sender report)
  uint64_t class7_frames = 0;  // frames the port took into class 7 (the job's extras, on this path)
};

// One sender (hosts and port at 1 Gbit/s, slack queues) runs a job of two groups of 1000 messages of 1000 bytes at MSR
// 0.5 (1 MB needed: no small-job class 0), optionally with a deadline, optionally behind a persistent class-0 flow
// (fabric::Config::bg_backlog: the network lab's background TCP flow on the slack switch). Runs up to 2 s.
DeadlineRun job_behind_class0(TimeNs deadline, uint32_t backlog, bool small_jobs_class0 = true) {
  fabric::Config c = config(1, 1e9, 1e9, Mode::kFull);
  c.bg_backlog = backlog;
  if (!small_jobs_class0) c.engine.small_job_class0_bytes = 0;
  fabric::Fabric f(c, 29);
  DeadlineRun r;
  constexpr uint32_t kPerGroup = 1000, kTarget = 500;
  const TimeNs t0 = f.now();
  TimeNs last[2] = {t0, t0};
  f.on_receiver_event = [&](Event& e) {
    if (e.type != EventType::kMessage) return;
    const int g = e.group_id == 1 ? 0 : 1;
    if (r.delivered[g] < kTarget) r.longest_wait = std::max(r.longest_wait, f.now() - last[g]);
    last[g] = f.now();
    r.delivered[g]++;
  };
  f.on_sender_event = [&](int, Event& e) {
    if (e.type != EventType::kJobDone) return;
    EXPECT_EQ(e.report->status, Status::kOk);
    r.done = true;
    r.class0 = e.report->time_in_class[0];
  };
  JobSpec spec{1, {{1, kPerGroup, 0.5}, {2, kPerGroup, 0.5}}, true};
  spec.deadline = deadline;
  const SessionId sid = fabric::Fabric::session_of(0);
  EXPECT_EQ(f.sender(0).start_job(sid, spec, f.now()), Status::kOk);
  std::vector<uint8_t> payload(1000, 5);
  for (uint32_t i = 0; i < kPerGroup; ++i)  // in index order per group, interleaved (approx-core's SendScheduler)
    for (uint32_t g = 0; g < 2; ++g)
      EXPECT_EQ(f.sender(0).submit(sid, 1, g, i, payload.data(), payload.size(), f.now()), Status::kOk);
  f.run([&] { return r.done; }, t0 + 2000 * kMs);
  for (int g = 0; g < 2; ++g)
    if (r.delivered[g] < kTarget) r.longest_wait = std::max(r.longest_wait, f.now() - last[g]);
  r.class7_frames = f.port().enqueued[7];
  std::printf(
      "deadline %.0f ms, backlog %u: done %d, delivered %u + %u, longest wait %.1f ms, class 0 %.1f ms, "
      "class-7 frames %llu\n",
      double(deadline) / 1e6, backlog, r.done, r.delivered[0], r.delivered[1], double(r.longest_wait) / 1e6,
      double(r.class0) / 1e6, static_cast<unsigned long long>(r.class7_frames));
  return r;
}
}  // namespace

// The Flink stall (issue 32): behind a persistent class-0 flow strict priority serves no approximate class, so a job
// without a deadline sits in its TLR's class (the starvation boost only reaches class 1) and delivers nothing in 2 s.
// With a 50 ms deadline (JobSpec::deadline) its groups escalate as they fall behind their schedule and reach class 0
// after 7/8 of it: every group meets its target, and none waits longer than the deadline for a delivery.
TEST(FabricTest, DeadlineJobsEscalatePastAPersistentClassZeroFlow) {
  constexpr TimeNs kDeadline = 50 * kMs;
  const DeadlineRun old = job_behind_class0(0, 20);
  EXPECT_FALSE(old.done);
  EXPECT_LT(old.delivered[0] + old.delivered[1], 1000u) << "the stall is reproduced";
  const DeadlineRun with = job_behind_class0(kDeadline, 20);
  EXPECT_TRUE(with.done);
  EXPECT_GE(with.delivered[0], 500u);
  EXPECT_GE(with.delivered[1], 500u);
  EXPECT_LE(with.longest_wait, kDeadline) << "no group waits behind class 0 beyond the deadline";
  EXPECT_GT(with.class0, 0u);
}

// On a free path a deadline changes no class of the planned sample: the groups stay ahead of their schedule, so the
// job never uses class 0 (the small-job rule, which sends its last 256 KiB there, is off here), and the messages
// beyond the plan travel in class 7 (where the path is free they arrive).
TEST(FabricTest, DeadlineJobsStayInTheirClassOnAFreePath) {
  const DeadlineRun without = job_behind_class0(0, 0, false);
  const DeadlineRun r = job_behind_class0(50 * kMs, 0, false);
  EXPECT_TRUE(without.done);
  EXPECT_TRUE(r.done);
  EXPECT_GE(r.delivered[0], 500u);
  EXPECT_GE(r.delivered[1], 500u);
  EXPECT_EQ(r.class0, 0u);
  EXPECT_EQ(without.class7_frames, 0u);
  EXPECT_GT(r.class7_frames, 0u);
}

namespace {
struct FlinkWindow {
  double ms = 0;  // start_job -> the sender's DONE (every group met its target and the sender knows it)
  bool done = false;
  uint64_t packets = 0, lost_packets = 0, given_up = 0, class7 = 0, dropped7 = 0, dropped_planned = 0;
  double class0_ms = 0, last_data_to_done_ms = 0;
};

// A Flink-like window (issue 32's lab workload): 16 groups of 30 messages of 1400 bytes (672 kB, ~45 ms here as in
// the lab's submit=target) from one host (1 Gbit/s) through a 200 Mbit/s slack-priority port behind a class-0 flow in
// bursts of 2 ms at the port's rate (70 % of it on average: the lab's background TCP). `deadline_policy`: MSR 0.85 with
// a 1 s deadline, all N submitted (the planned sample first, as approx-core's SendScheduler), as submit=slack; else
// each group's target as an exact group (submit=target). `offset` shifts the job's start against the bursts.
FlinkWindow flink_window(bool deadline_policy, TimeNs offset) {
  fabric::Config c = config(1, 1e9, 200e6, Mode::kFull);
  c.bg_load = 0.7;
  fabric::Fabric f(c, 31);
  f.run([] { return false; }, 2 * kMs + offset);
  constexpr uint32_t kGroups = 16, kPerGroup = 30;
  const uint32_t target = slack::target_of(0.85, kPerGroup);  // 26
  const uint32_t n = deadline_policy ? kPerGroup : target;
  FlinkWindow r;
  std::shared_ptr<const JobReport> rep;
  f.on_sender_event = [&](int, Event& e) {
    if (e.type == EventType::kJobDone) rep = e.report;
  };
  JobSpec spec{1, {}, true};
  for (uint32_t g = 0; g < kGroups; ++g) spec.groups.push_back({g + 1, n, deadline_policy ? 0.85 : 1.0});
  if (deadline_policy) spec.deadline = 1000 * kMs;
  const SessionId sid = fabric::Fabric::session_of(0);
  const fabric::PortStats before = f.port();
  const TimeNs t0 = f.now();
  EXPECT_EQ(f.sender(0).start_job(sid, spec, t0), Status::kOk);
  std::vector<uint8_t> payload(1400, 3);
  for (uint32_t i = 0; i < n; ++i)  // planned messages first, interleaved over the groups, then the extras
    for (uint32_t g = 0; g < kGroups; ++g)
      EXPECT_EQ(f.sender(0).submit(sid, 1, g, i, payload.data(), payload.size(), t0), Status::kOk);
  r.done = f.run([&] { return rep != nullptr; }, t0 + 2000 * kMs);
  if (!r.done) return r;
  EXPECT_EQ(rep->status, Status::kOk);
  for (const auto& g : rep->groups) EXPECT_GE(g.delivered, target);
  r.ms = double(rep->finished - rep->started) / 1e6;
  r.packets = rep->packets_sent;
  r.given_up = rep->given_up_for_loss;
  r.class0_ms = double(rep->time_in_class[0]) / 1e6;
  r.last_data_to_done_ms = double(rep->last_data_to_done) / 1e6;
  r.class7 = f.port().enqueued[7] - before.enqueued[7];
  r.dropped7 = f.port().dropped[7] - before.dropped[7];
  for (int k = 0; k < 7; ++k) r.dropped_planned += f.port().dropped[k] - before.dropped[k];
  r.lost_packets = static_cast<uint64_t>(rep->measured_loss * double(rep->packets_sent) + 0.5);
  std::printf(
      "%s offset %.2f ms: %.1f ms, packets %llu (lost %llu), given up %llu, class-7 frames %llu (dropped %llu), "
      "planned-class drops %llu, class 0 %.1f ms, last data -> done %.2f ms\n",
      deadline_policy ? "slack " : "target", double(offset) / 1e6, r.ms, (unsigned long long)r.packets,
      (unsigned long long)r.lost_packets, (unsigned long long)r.given_up, (unsigned long long)r.class7,
      (unsigned long long)r.dropped7, (unsigned long long)r.dropped_planned, r.class0_ms, r.last_data_to_done_ms);
  return r;
}
}  // namespace

// Issue 32's Flink gap: the deadline policy sends the same planned sample as submit=target (plus extras in class 7
// where the path is free), so behind the same class-0 flow it must not take longer than a reliable job of the
// targets: over 8 start offsets against the bursts its median window takes at most 1.1x the reliable one's.
// Was 1.7x (p50 79 vs 45 ms): the first window's burst into the tiny class-2 queue spent the whole allowance within
// ~2 ms, and the job, now with no allowance and still needing nearly all of its target, sat in class 1 (starved by
// the bursts; its rate collapsed) until the needy rule's 3/4 of the target had arrived (~35 ms). No extra was sent
// (0 class-7 frames) and the DONE came as soon (last data -> DONE ~3.5 ms both): neither the extras nor the end was
// the cause. Now a deadline job is needy as soon as its allowance is spent (RateController::tlr_class).
TEST(FabricTest, DeadlinePolicyWindowIsNoSlowerThanTheTargetAlone) {
  std::vector<double> slack_ms, target_ms;
  for (int i = 0; i < 8; ++i) {
    const TimeNs offset = TimeNs(i) * 370'000;
    const FlinkWindow s = flink_window(true, offset);
    const FlinkWindow t = flink_window(false, offset);
    ASSERT_TRUE(s.done);
    ASSERT_TRUE(t.done);
    slack_ms.push_back(s.ms);
    target_ms.push_back(t.ms);
  }
  std::sort(slack_ms.begin(), slack_ms.end());
  std::sort(target_ms.begin(), target_ms.end());
  const double s50 = (slack_ms[3] + slack_ms[4]) / 2, t50 = (target_ms[3] + target_ms[4]) / 2;
  std::printf("window p50: slack %.1f ms, target %.1f ms; max %.1f / %.1f ms\n", s50, t50, slack_ms.back(),
              target_ms.back());
  EXPECT_LE(s50, 1.1 * t50);
}
