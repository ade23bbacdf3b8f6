// Two engines joined by many sessions, one sending job per session (the lab agents' layout: one session per job),
// over a lossy, reordering link with a fake clock. Used by the deadline-cache test (many_sessions_test.cpp) and the
// instruction-count bench (bench/many_sessions_bench.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <vector>

#include "core/engine.hpp"

namespace netapprox::atp::many {

struct Layout {
  uint32_t sessions = 500;
  uint32_t messages = 40;       // per job
  uint32_t size = 3000;         // bytes per message (3 datagrams)
  double loss = 0.01;           // per datagram, both directions
  TimeNs delay = 50'000;        // one way
  TimeNs jitter = 20'000;       // uniform extra delay (reorders)
  TimeNs stagger = 20'000;      // job i starts at i * stagger
  uint32_t distinct_peers = 7;  // sessions spread over this many peer ids (several sessions share a peer)
  uint64_t seed = 1;
};

class ManySessions {
 public:
  static EngineConfig config() {
    EngineConfig c;
    c.line_rate_bps = 10'000'000'000ULL;
    c.max_sessions = 4096;
    return c;
  }

  explicit ManySessions(const Layout& l) : l_(l), a_(config()), b_(config()), rng_(l.seed) {
    for (uint32_t i = 0; i < l.sessions; ++i) {
      uint8_t key[kKeyBytes];
      for (size_t k = 0; k < kKeyBytes; ++k) key[k] = static_cast<uint8_t>(i * 131 + k * 7 + l.seed);
      const SessionId sid = 1000 + i;
      const PeerId peer = 1 + i % l.distinct_peers;
      a_.open_session(sid, key, peer, true, now_);
      b_.open_session(sid, key, peer, false, now_);
    }
  }

  Engine& a() { return a_; }
  Engine& b() { return b_; }
  TimeNs now() const { return now_; }
  uint64_t steps() const { return steps_; }
  uint32_t jobs_done() const { return done_; }

  // Called after every step with both engines (the test compares next_timeout with the full scan here).
  std::function<void()> after_step;

  // Runs until every job reported on the sender or `limit` of simulated time passed; true when all finished.
  bool run(TimeNs limit) {
    const TimeNs end = now_ + limit;
    std::vector<uint8_t> payload(l_.size, 0x5A);
    while (now_ < end && done_ < l_.sessions) {
      // Jobs start staggered, each with all its messages submitted.
      while (started_ < l_.sessions && TimeNs(started_) * l_.stagger <= now_) {
        const SessionId sid = 1000 + started_;
        const double msr = started_ % 3 == 0 ? 0.8 : 1.0;
        JobSpec spec{1, {{7, l_.messages, msr}}, true};
        a_.start_job(sid, spec, now_);
        for (uint32_t m = 0; m < l_.messages; ++m) a_.submit(sid, 1, 0, m, payload.data(), payload.size(), now_);
        ++started_;
      }
      step();
      ++steps_;
      if (after_step) after_step();
      // Next: the earliest of the wire, both engines' timers and the next job start.
      TimeNs next = std::min(a_.next_timeout(), b_.next_timeout());
      if (!wire_.empty()) next = std::min(next, wire_.begin()->first);
      if (started_ < l_.sessions) next = std::min(next, TimeNs(started_) * l_.stagger);
      if (next == kNever) break;
      now_ = std::max(now_ + 1, next);
    }
    return done_ == l_.sessions;
  }

 private:
  struct Packet {
    bool to_b;
    PeerId from;
    std::vector<uint8_t> bytes;
  };

  void step() {
    // Deliver what has arrived.
    while (!wire_.empty() && wire_.begin()->first <= now_) {
      Packet p = std::move(wire_.begin()->second);
      wire_.erase(wire_.begin());
      (p.to_b ? b_ : a_).on_datagram(p.bytes.data(), p.bytes.size(), p.from, now_);
    }
    for (Engine* e : {&a_, &b_}) {
      if (e->next_timeout() <= now_) e->on_timeout(now_);
      uint8_t buf[2048];
      Transmit t;
      while (e->poll_transmit(now_, buf, sizeof buf, &t)) {
        if (uni_(rng_) < l_.loss) continue;
        const TimeNs at = now_ + l_.delay + TimeNs(uni_(rng_) * double(l_.jitter));
        wire_.emplace(at, Packet{e == &a_, t.peer, std::vector<uint8_t>(buf, buf + t.len)});
      }
      Event ev;
      while (e->poll_event(&ev)) {
        if (ev.type == EventType::kMessage) e->release(ev.handle);
        if (e == &a_ && ev.type == EventType::kJobDone) ++done_;
      }
    }
  }

  Layout l_;
  Engine a_, b_;
  TimeNs now_ = 1'000'000'000;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> uni_{0.0, 1.0};
  std::multimap<TimeNs, Packet> wire_;
  uint32_t started_ = 0, done_ = 0;
  uint64_t steps_ = 0;
};

}  // namespace netapprox::atp::many
