// A discrete-event simulator of an incast fabric: N sender hosts and one receiver host around a switch, driven with
// a fake clock. Each sender's uplink serialises at the host line rate; the switch port toward the receiver is the
// bottleneck, either one drop-tail FIFO or 8 strict-priority queues by DSCP with the paper's slack buffer plan
// (class k of 1..7 holds 8 - k frames, class 0 the rest). The way back is uncongested. Every sender has one session
// to the receiver. Optionally an exact background flow (class 0, as the network lab's TCP background) arrives at
// the port in on/off bursts at the port's rate: while a burst lasts, strict priority serves no approximate class.
// Used by the rate-law, fairness and starvation tests and by bench/incast_sim.cpp.
#pragma once

#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "core/engine.hpp"

namespace netapprox::atp::fabric {

struct Config {
  int senders = 4;
  double host_rate_bps = 1e9;       // each host's line rate (the engines' R_max should match)
  double port_rate_bps = 1e9;       // the bottleneck: the switch port toward the receiver
  TimeNs host_delay = 25'000;       // one-way propagation of each hop (host -> switch, switch -> host)
  bool slack_queues = true;         // 8 strict-priority queues by DSCP; else one FIFO
  uint64_t buffer_bytes = 150'000;  // the port's buffer: the FIFO's, or class 0's plus the 28 frames of classes 1..7
  uint32_t frame_bytes = 1514;
  // Slack queues only: > 0 gives the approximate classes dynamic thresholds instead of 8 - k frames - class k admits
  // a frame while it holds at most approx_alpha x (8 - k) / 7 x the port buffer's free bytes (the simulator's shared
  // switch, benchmarks/sim/src/switch_queue.hpp, for one port).
  double approx_alpha = 0;
  // Class-0 background: bursts of bg_on at the port's rate, repeated so the mean is bg_load of the port (0: none).
  double bg_load = 0;
  TimeNs bg_on = 2'000'000;
  // A persistent class-0 flow (a background TCP flow whose window fills the port): it keeps this many of its frames
  // queued in class 0 at all times, so strict priority never serves an approximate class while it lasts, and class-0
  // traffic shares the port with it in FIFO order (0: none).
  uint32_t bg_backlog = 0;
  // Late wake-ups of the senders' drivers (a user-space agent on a busy machine): after every poll a sender sleeps
  // an exponential time of this mean before its engine is polled again (timers and pacing included; datagrams that
  // arrive are still processed). 0: polled exactly when due.
  TimeNs sender_wake_mean = 0;
  EngineConfig engine;  // both ends (line rate, mode, ...)
};

struct PortStats {
  uint64_t enqueued[kNumPriorityClasses] = {}, dropped[kNumPriorityClasses] = {}, sent_bytes = 0;
  TimeNs busy = 0;  // time the port spent transmitting
  uint64_t max_queue_frames[kNumPriorityClasses] = {};
  uint64_t background_bytes = 0;  // class-0 background sent by the port
};

class Fabric {
 public:
  static constexpr PeerId kReceiverPeer = 1000;
  static SessionId session_of(int sender) { return 0x5e55'0000 + sender; }

  explicit Fabric(const Config& c, uint64_t seed = 1) : cfg_(c), receiver_(c.engine), wake_rng_(seed * 7 + 3) {
    for (int k = 0; k < kNumPriorityClasses; ++k) class_of_dscp_[c.engine.dscp_by_class[k]] = k;
    if (!c.slack_queues) class_of_dscp_.clear();
    for (int i = 0; i < c.senders; ++i) {
      senders_.push_back(std::make_unique<Engine>(c.engine));
      uplink_busy_.push_back(0);
      wake_at_.push_back(0);
      uint8_t key[kKeyBytes];
      for (size_t b = 0; b < kKeyBytes; ++b) key[b] = static_cast<uint8_t>(seed * 131 + i * 7 + b);
      senders_[i]->open_session(session_of(i), key, kReceiverPeer, true, now_);
      receiver_.open_session(session_of(i), key, PeerId(i), false, now_);
    }
    // Slack plan: class k in 1..7 buffers 8 - k frames, class 0 the rest of the port's buffer.
    const uint64_t approx = 28ull * c.frame_bytes;
    limit_[0] = c.buffer_bytes > approx ? c.buffer_bytes - approx : c.frame_bytes;
    for (int k = 1; k < kNumPriorityClasses; ++k) limit_[k] = uint64_t(8 - k) * c.frame_bytes;
  }

  // Another session between sender i and the receiver (as the lab's agents open one per job). The sender's end is
  // the initiator; ids must be unique across senders.
  Status open_extra_session(int sender, SessionId id) {
    uint8_t key[kKeyBytes];
    for (size_t b = 0; b < kKeyBytes; ++b) key[b] = static_cast<uint8_t>(id * 131 + sender * 7 + b);
    const Status st = senders_[sender]->open_session(id, key, kReceiverPeer, true, now_);
    if (st != Status::kOk) return st;
    return receiver_.open_session(id, key, PeerId(sender), false, now_);
  }

  TimeNs now() const { return now_; }
  Engine& receiver() { return receiver_; }
  Engine& sender(int i) { return *senders_[i]; }
  int senders() const { return int(senders_.size()); }
  const PortStats& port() const { return port_; }

  // Events of the receiver and of each sender (messages are released at once).
  std::function<void(Event&)> on_receiver_event;
  std::function<void(int, Event&)> on_sender_event;

  // Runs until pred() or the clock passes `until`. Returns pred().
  bool run(const std::function<bool()>& pred, TimeNs until) {
    for (uint64_t steps = 0; steps < 500'000'000; ++steps) {
      if (pred()) return true;
      step(receiver_, -1);
      for (int i = 0; i < senders(); ++i) step(*senders_[i], i);
      drain();
      if (pred()) return true;
      TimeNs next = receiver_.next_timeout();
      for (size_t i = 0; i < senders_.size(); ++i) {
        const TimeNs t = senders_[i]->next_timeout();
        next = std::min(next, t == kNever ? t : std::max(t, wake_at_[i]));
      }
      if (!flight_.empty()) next = std::min(next, flight_.begin()->first);
      if (port_busy_until_ > now_ && !queues_empty()) next = std::min(next, port_busy_until_);
      if (!arrivals_.empty()) next = std::min(next, arrivals_.begin()->first);
      if (cfg_.bg_load > 0 && next != kNever) next = std::min(next, next_bg_);
      if (next == kNever || next > until) {
        now_ = until;
        return pred();
      }
      now_ = std::max(next, now_ + 1);
      advance();
    }
    return pred();
  }

 private:
  struct Packet {
    int from;  // sender index, or -1 for the receiver
    PeerId to;
    uint8_t klass;
    std::vector<uint8_t> bytes;
  };

  void step(Engine& e, int who) {
    if (who >= 0 && cfg_.sender_wake_mean > 0) {
      if (now_ < wake_at_[who] || e.next_timeout() > now_) return;  // asleep, or nothing due
      wake_at_[who] =
          now_ + TimeNs(std::exponential_distribution<double>(1.0 / double(cfg_.sender_wake_mean))(wake_rng_));
    }
    if (e.next_timeout() <= now_) e.on_timeout(now_);
    uint8_t buf[65536];
    Transmit t;
    for (int budget = 4096; budget > 0 && e.poll_transmit(now_, buf, sizeof buf, &t); --budget) {
      Packet p{who, t.peer, klass_of(t.dscp), std::vector<uint8_t>(buf, buf + t.len)};
      if (who < 0) {  // receiver -> sender: uncongested
        flight_.emplace(now_ + 2 * cfg_.host_delay, std::move(p));
      } else {  // sender uplink at the host rate, then the switch
        const TimeNs ser = TimeNs(double(t.len + 42) * 8e9 / cfg_.host_rate_bps);
        uplink_busy_[who] = std::max(uplink_busy_[who], now_) + ser;
        arrivals_.emplace(uplink_busy_[who] + cfg_.host_delay, std::move(p));
      }
    }
  }

  uint8_t klass_of(uint8_t dscp) const {
    auto it = class_of_dscp_.find(dscp);
    return it == class_of_dscp_.end() ? 0 : it->second;
  }

  bool queues_empty() const {
    for (const auto& q : queues_)
      if (!q.empty()) return false;
    return true;
  }

  size_t wire_bytes(const Packet& p) const { return p.bytes.size() + 42; }  // UDP/IP/Ethernet headers

  static constexpr int kBackground = -2;  // Packet::from of background frames (the port's sink)

  // Schedules the background bursts due by now_: frames at the port's rate during each on period.
  void background() {
    if (cfg_.bg_load <= 0) return;
    const TimeNs frame_time = TimeNs(double(cfg_.frame_bytes) * 8e9 / cfg_.port_rate_bps);
    const TimeNs period = TimeNs(double(cfg_.bg_on) / cfg_.bg_load);
    while (next_bg_ <= now_) {
      for (TimeNs t = next_bg_; t < next_bg_ + cfg_.bg_on; t += frame_time)
        arrivals_.emplace(t, Packet{kBackground, 0, 0, std::vector<uint8_t>(cfg_.frame_bytes - 42)});
      next_bg_ += period;
    }
  }

  // Tops the persistent class-0 flow up to cfg_.bg_backlog queued frames (at time `at`).
  void backlog(TimeNs at) {
    while (bg_queued_ < cfg_.bg_backlog) {
      const uint64_t before = port_.enqueued[0];
      enqueue(Packet{kBackground, 0, 0, std::vector<uint8_t>(cfg_.frame_bytes - 42)}, at);
      if (port_.enqueued[0] == before) break;  // class 0 is full
    }
  }

  // Moves time to now_: packets reach the switch, the port sends, packets reach their destination.
  void advance() {
    background();
    backlog(now_);
    for (;;) {
      TimeNs t = kNever;
      if (!arrivals_.empty()) t = arrivals_.begin()->first;
      if (!queues_empty()) t = std::min(t, std::max(port_busy_until_, TimeNs(0)));
      if (t > now_) break;
      if (!queues_empty() && port_busy_until_ <= t &&
          (arrivals_.empty() || port_busy_until_ <= arrivals_.begin()->first)) {
        transmit_next();
        continue;
      }
      Packet p = std::move(arrivals_.begin()->second);
      const TimeNs at = arrivals_.begin()->first;
      arrivals_.erase(arrivals_.begin());
      enqueue(std::move(p), at);
    }
    while (!flight_.empty() && flight_.begin()->first <= now_) {
      Packet p = std::move(flight_.begin()->second);
      flight_.erase(flight_.begin());
      if (p.from == kBackground) {
        port_.background_bytes += wire_bytes(p);
      } else if (p.from < 0) {
        senders_[p.to]->on_datagram(p.bytes.data(), p.bytes.size(), kReceiverPeer, now_);
      } else {
        receiver_.on_datagram(p.bytes.data(), p.bytes.size(), PeerId(p.from), now_);
      }
    }
  }

  void enqueue(Packet p, TimeNs at) {
    const int k = cfg_.slack_queues ? p.klass : 0;
    uint64_t limit = cfg_.slack_queues ? limit_[k] : cfg_.buffer_bytes;
    if (cfg_.slack_queues && k > 0 && cfg_.approx_alpha > 0) {
      uint64_t used = 0;
      for (uint64_t q : queued_) used += q;
      const uint64_t free = cfg_.buffer_bytes > used ? cfg_.buffer_bytes - used : 0;
      limit = uint64_t(cfg_.approx_alpha * double(8 - k) / 7 * double(free));
    }
    if (queued_[k] + wire_bytes(p) > limit) {
      port_.dropped[k]++;
      return;
    }
    port_.enqueued[k]++;
    queued_[k] += wire_bytes(p);
    if (p.from == kBackground) bg_queued_++;
    queues_[k].push_back(std::move(p));
    port_.max_queue_frames[k] = std::max<uint64_t>(port_.max_queue_frames[k], queues_[k].size());
    if (port_busy_until_ < at) port_busy_until_ = at;  // the port was idle: it starts now
  }

  // Strict priority: the lowest class number that has a packet.
  void transmit_next() {
    backlog(port_busy_until_);
    for (auto& q : queues_) {
      if (q.empty()) continue;
      Packet p = std::move(q.front());
      q.pop_front();
      if (p.from == kBackground) bg_queued_--;
      const int k = int(&q - &queues_[0]);
      queued_[k] -= wire_bytes(p);
      const TimeNs ser = TimeNs(double(wire_bytes(p)) * 8e9 / cfg_.port_rate_bps);
      const TimeNs start = port_busy_until_;
      port_busy_until_ = start + ser;
      port_.busy += ser;
      port_.sent_bytes += wire_bytes(p);
      flight_.emplace(port_busy_until_ + cfg_.host_delay, std::move(p));
      return;
    }
  }

  void drain() {
    Event ev;
    while (receiver_.poll_event(&ev)) {
      if (on_receiver_event) on_receiver_event(ev);
      if (ev.type == EventType::kMessage) receiver_.release(ev.handle);
    }
    for (int i = 0; i < senders(); ++i)
      while (senders_[i]->poll_event(&ev))
        if (on_sender_event) on_sender_event(i, ev);
  }

  Config cfg_;
  Engine receiver_;
  std::vector<std::unique_ptr<Engine>> senders_;
  std::vector<TimeNs> uplink_busy_;
  std::vector<TimeNs> wake_at_;  // sender_wake_mean: a sender's engine is not polled before this
  std::mt19937_64 wake_rng_;
  std::map<uint8_t, int> class_of_dscp_;
  std::array<uint64_t, kNumPriorityClasses> limit_{}, queued_{};
  std::array<std::deque<Packet>, kNumPriorityClasses> queues_;
  TimeNs port_busy_until_ = 0;
  uint32_t bg_queued_ = 0;                  // background frames in the port's queues
  std::multimap<TimeNs, Packet> arrivals_;  // at the switch
  std::multimap<TimeNs, Packet> flight_;    // toward their destination host
  PortStats port_;
  TimeNs now_ = 1'000'000;
  TimeNs next_bg_ = 1'000'000;
};

}  // namespace netapprox::atp::fabric
