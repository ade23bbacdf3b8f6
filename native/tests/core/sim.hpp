// A discrete-event simulator that drives two sans-I/O engines over an emulated link with a fake clock: random
// and bursty (Gilbert-Elliott) loss, reordering (jitter), duplication, and a rate-limited bottleneck with a
// drop-tail buffer. Tests and the fuzzer-free protocol checks all use it; the UDP driver drives the same core.
#pragma once

#include <functional>
#include <map>
#include <random>
#include <vector>

#include "core/engine.hpp"

namespace netapprox::atp::sim {

struct LinkConfig {
  double loss = 0;          // independent loss probability
  double burst_enter = 0;   // Gilbert-Elliott: P(good -> bad) per packet; bad drops everything
  double burst_exit = 0.5;  // P(bad -> good) per packet
  TimeNs delay = 50'000;    // one-way propagation
  TimeNs jitter = 0;        // uniform extra delay in [0, jitter): reorders packets (without it a link is FIFO,
                            // also when its delay changes)
  double duplicate = 0;     // probability a packet is delivered twice
  double rate_bps = 0;      // bottleneck rate; 0 = unlimited
  uint64_t buffer_bytes = 1 << 20;  // bottleneck drop-tail buffer
};

struct Delivered {
  JobId job;
  MessageId message;
  uint64_t group_id;
  std::vector<uint8_t> data;
};

class Sim {
 public:
  static constexpr PeerId kPeerA = 1, kPeerB = 2;
  static constexpr SessionId kSession = 0x5e55;

  Sim(const EngineConfig& ca, const EngineConfig& cb, LinkConfig ab, LinkConfig ba, uint64_t seed)
      : a_(ca), b_(cb), rng_(seed) {
    links_[0].cfg = ab;
    links_[1].cfg = ba;
    uint8_t key[kKeyBytes];
    for (size_t i = 0; i < kKeyBytes; ++i) key[i] = static_cast<uint8_t>(seed * 31 + i);
    a_.open_session(kSession, key, kPeerB, true, now_);
    b_.open_session(kSession, key, kPeerA, false, now_);
  }

  Engine& a() { return a_; }
  Engine& b() { return b_; }
  TimeNs now() const { return now_; }
  LinkConfig& link_ab() { return links_[0].cfg; }
  LinkConfig& link_ba() { return links_[1].cfg; }

  // Called for every event; the default records deliveries on B and releases buffers at once.
  std::function<void(Engine&, Event&)> on_event_a, on_event_b;
  // Observe every datagram A / B transmits (before the link).
  std::function<void(const uint8_t*, size_t, uint8_t dscp)> on_transmit_a, on_transmit_b;
  // Return true to drop a datagram A / B transmits before it reaches the link (targeted losses in tests).
  std::function<bool(const uint8_t*, size_t)> drop_a, drop_b;

  std::vector<Delivered> delivered_b;
  std::vector<Event> events_a, events_b;  // non-message events
  bool hold_messages_b = false;           // do not release kMessage buffers (backpressure tests)
  std::vector<uint64_t> held_handles_b;

  // Runs until pred() is true or the clock passes `until`. Returns pred().
  bool run(const std::function<bool()>& pred, TimeNs until) {
    for (uint64_t steps = 0; steps < 200'000'000; ++steps) {
      if (pred()) return true;
      step_engine(a_, 0, now_);
      step_engine(b_, 1, now_);
      drain(a_, true);
      drain(b_, false);
      if (pred()) return true;
      TimeNs next = std::min(a_.next_timeout(), b_.next_timeout());
      for (auto& l : links_)
        if (!l.in_flight.empty()) next = std::min(next, l.in_flight.begin()->first);
      if (next == kNever || next > until) {
        now_ = until;
        return pred();
      }
      now_ = std::max(next, now_ + 1);  // time always moves forward
      deliver_due();
    }
    return pred();
  }

 private:
  struct Packet {
    int dir;
    std::vector<uint8_t> bytes;
  };
  struct Link {
    LinkConfig cfg;
    bool bad = false;
    TimeNs busy_until = 0;
    TimeNs last_arrival = 0;
    uint64_t queued_bytes = 0;
    std::multimap<TimeNs, Packet> in_flight;
    std::multimap<TimeNs, uint64_t> dequeue;  // when queued bytes leave the bottleneck
  };

  double uni() { return std::uniform_real_distribution<double>(0, 1)(rng_); }

  void step_engine(Engine& e, int dir, TimeNs now) {
    if (e.next_timeout() <= now) e.on_timeout(now);
    uint8_t buf[65536];
    Transmit t;
    int budget = 4096;
    while (budget-- > 0 && e.poll_transmit(now, buf, sizeof buf, &t)) {
      auto& observe = dir == 0 ? on_transmit_a : on_transmit_b;
      if (observe) observe(buf, t.len, t.dscp);
      auto& drop = dir == 0 ? drop_a : drop_b;
      if (drop && drop(buf, t.len)) continue;
      send(dir, buf, t.len, now);
    }
  }

  void send(int dir, const uint8_t* p, size_t len, TimeNs now) {
    Link& l = links_[dir];
    // Bottleneck: drop-tail once the buffer holds buffer_bytes.
    while (!l.dequeue.empty() && l.dequeue.begin()->first <= now) {
      l.queued_bytes -= l.dequeue.begin()->second;
      l.dequeue.erase(l.dequeue.begin());
    }
    TimeNs depart = now;
    if (l.cfg.rate_bps > 0) {
      if (l.queued_bytes + len > l.cfg.buffer_bytes) return;
      const TimeNs ser = TimeNs(double(len) * 8e9 / l.cfg.rate_bps);
      l.busy_until = std::max(l.busy_until, now) + ser;
      depart = l.busy_until;
      l.queued_bytes += len;
      l.dequeue.emplace(depart, len);
    }
    if (l.cfg.burst_enter > 0) {
      if (l.bad ? uni() < l.cfg.burst_exit : uni() < l.cfg.burst_enter) l.bad = !l.bad;
      if (l.bad) return;
    }
    if (uni() < l.cfg.loss) return;
    const int copies = uni() < l.cfg.duplicate ? 2 : 1;
    for (int c = 0; c < copies; ++c) {
      TimeNs arrival = depart + l.cfg.delay;
      if (l.cfg.jitter) {
        arrival += TimeNs(uni() * double(l.cfg.jitter));
      } else {
        arrival = std::max(arrival, l.last_arrival);  // a shorter delay does not overtake packets on the way
      }
      l.last_arrival = arrival;
      l.in_flight.emplace(arrival, Packet{dir, std::vector<uint8_t>(p, p + len)});
    }
  }

  void deliver_due() {
    for (int d = 0; d < 2; ++d) {
      Link& l = links_[d];
      while (!l.in_flight.empty() && l.in_flight.begin()->first <= now_) {
        Packet p = std::move(l.in_flight.begin()->second);
        l.in_flight.erase(l.in_flight.begin());
        if (d == 0)
          b_.on_datagram(p.bytes.data(), p.bytes.size(), kPeerA, now_);
        else
          a_.on_datagram(p.bytes.data(), p.bytes.size(), kPeerB, now_);
      }
    }
  }

  void drain(Engine& e, bool is_a) {
    Event ev;
    while (e.poll_event(&ev)) {
      auto& cb = is_a ? on_event_a : on_event_b;
      if (cb) cb(e, ev);
      if (ev.type == EventType::kMessage) {
        if (!is_a) delivered_b.push_back({ev.job, ev.message, ev.group_id, {ev.data, ev.data + ev.len}});
        if (!is_a && hold_messages_b)
          held_handles_b.push_back(ev.handle);
        else
          e.release(ev.handle);
      } else {
        (is_a ? events_a : events_b).push_back(ev);
      }
    }
  }

  Engine a_, b_;
  std::mt19937_64 rng_;
  Link links_[2];
  TimeNs now_ = 1'000'000;
};

}  // namespace netapprox::atp::sim
