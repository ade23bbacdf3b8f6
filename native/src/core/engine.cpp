#include "core/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "core/crypto.hpp"
#include "core/session.hpp"

namespace netapprox::atp {

using wire::PacketType;

// ---------------------------------------------------------------------------------------------------------------
// Names, modes, config

const char* status_name(Status s) {
  switch (s) {
    case Status::kOk: return "ok";
    case Status::kInvalidArgument: return "invalid argument";
    case Status::kNotFound: return "not found";
    case Status::kAlreadyExists: return "already exists";
    case Status::kWouldBlock: return "would block";
    case Status::kLimitExceeded: return "limit exceeded";
    case Status::kClosed: return "closed";
    case Status::kPeerDead: return "peer dead";
    case Status::kIdleTimeout: return "idle timeout";
    case Status::kProtocolError: return "protocol error";
    case Status::kInternal: return "internal error";
  }
  return "unknown";
}

static const char* const kModeNames[] = {"base", "rc", "rc_mrdf", "fixtlr", "fixprio", "full"};

const char* mode_name(Mode m) {
  const int i = static_cast<int>(m);
  return i >= 0 && i < 6 ? kModeNames[i] : "unknown";
}

std::optional<Mode> parse_mode(const std::string& name) {
  for (int i = 0; i < 6; ++i)
    if (name == kModeNames[i]) return static_cast<Mode>(i);
  return std::nullopt;
}

ModeFlags mode_flags(Mode m) {
  switch (m) {
    case Mode::kBase: return {false, false, false, false, false};
    case Mode::kRc: return {true, false, false, false, false};
    case Mode::kRcMrdf: return {true, false, true, false, false};
    case Mode::kFixTlr: return {true, false, true, true, true};
    case Mode::kFixPrio: return {true, true, true, true, false};
    case Mode::kFull: return {true, true, true, true, true};
  }
  return {true, true, true, true, true};
}

std::string EngineConfig::validate() const {
  if (line_rate_bps < 1'000'000) return "line_rate_bps must be at least 1 Mbit/s";
  if (max_datagram < wire::kMinDatagram || max_datagram > wire::kMaxDatagram)
    return "max_datagram must be in [256, 65507]";
  if (!(reaction_speed > 0 && reaction_speed <= 1)) return "reaction_speed must be in (0, 1]";
  if (!(tlr_floor >= 0 && tlr_floor < 1)) return "tlr_floor must be in [0, 1)";
  if (initial_rtt == 0 || min_epoch == 0) return "initial_rtt and min_epoch must be positive";
  if (ack_every == 0) return "ack_every must be positive";
  if (peer_death_timeout == 0) return "peer_death_timeout must be positive";
  if (recv_buffer_bytes < 65536 || send_buffer_bytes < 65536) return "buffers must be at least 64 KiB";
  if (max_message_bytes == 0 || max_message_bytes > (1U << 30)) return "max_message_bytes must be in [1, 1 GiB]";
  if (max_sessions == 0 || max_jobs_per_session == 0 || max_messages_per_job == 0 || max_groups_per_job == 0)
    return "limits must be positive";
  if (max_pending_events < 16) return "max_pending_events must be at least 16";
  for (uint8_t d : dscp_by_class)
    if (d > 63) return "DSCP values must be in [0, 63]";
  if (no_priority_dscp > 63) return "no_priority_dscp must be in [0, 63]";
  if (static_cast<int>(mode) < 0 || static_cast<int>(mode) > 5) return "unknown mode";
  if (!(faults.drop_outgoing >= 0 && faults.drop_outgoing < 1) || !(faults.drop_incoming >= 0 && faults.drop_incoming < 1))
    return "fault drop fractions must be in [0, 1)";
  return "";
}

// ---------------------------------------------------------------------------------------------------------------
// Small helpers

void RttEstimator::on_sample(TimeNs sample, TimeNs ack_delay) {
  latest = sample;
  min_rtt = std::min(min_rtt, sample);
  if (sample >= min_rtt + ack_delay) sample -= ack_delay;
  if (!has_sample) {
    srtt = sample;
    rttvar = sample / 2;
    has_sample = true;
    return;
  }
  const TimeNs diff = srtt > sample ? srtt - sample : sample - srtt;
  rttvar = (3 * rttvar + diff) / 4;
  srtt = (7 * srtt + sample) / 8;
}

ReceivedWindow::Check ReceivedWindow::check(uint64_t pn) const {
  if (!any_ || pn > largest_) return Check::kNew;
  if (largest_ - pn >= kBits) return Check::kTooOld;
  return test(pn) ? Check::kDuplicate : Check::kNew;
}

void ReceivedWindow::mark(uint64_t pn) {
  if (!any_ || pn > largest_) {
    const uint64_t from = any_ ? largest_ + 1 : pn;
    if (pn - from >= kBits - 1) {
      bits_.fill(0);
    } else {
      for (uint64_t k = 0, n = pn - from + 1; k < n; ++k) {  // by count: pn may be 2^64 - 1
        const uint64_t q = from + k;
        bits_[(q % kBits) / 64] &= ~(uint64_t{1} << (q % 64));
      }
    }
    largest_ = pn;
    any_ = true;
  }
  bits_[(pn % kBits) / 64] |= uint64_t{1} << (pn % 64);
}

std::vector<wire::AckRange> ReceivedWindow::ranges(size_t max_ranges) const {
  std::vector<wire::AckRange> out;
  if (!any_) return out;
  const uint64_t floor = largest_ >= kBits - 1 ? largest_ - (kBits - 1) : 0;
  uint64_t pn = largest_;
  while (out.size() < max_ranges) {
    const uint64_t high = pn;
    while (pn > floor && test(pn - 1)) {
      // Whole words of received packets are skipped at once (the common case: everything arrived).
      if (pn % 64 == 0 && pn >= floor + 64 && bits_[((pn - 64) % kBits) / 64] == ~uint64_t{0}) {
        pn -= 64;
      } else {
        --pn;
      }
    }
    out.push_back({pn, high});
    // skip the gap
    if (pn <= floor) break;
    --pn;
    while (pn > floor && !test(pn)) --pn;
    if (!test(pn)) break;
  }
  return out;
}

uint32_t SendJob::group_of(MessageId m) const {
  auto it = std::upper_bound(groups.begin(), groups.end(), m,
                             [](MessageId v, const SendGroup& g) { return v < g.base; });
  return static_cast<uint32_t>(it - groups.begin()) - 1;
}

uint32_t RecvJob::group_of(MessageId m) const {
  auto it = std::upper_bound(groups.begin(), groups.end(), m,
                             [](MessageId v, const RecvGroup& g) { return v < g.base; });
  return static_cast<uint32_t>(it - groups.begin()) - 1;
}

static bool bit_get(const std::vector<uint64_t>& b, uint32_t i) { return b[i / 64] >> (i % 64) & 1; }
static void bit_set(std::vector<uint64_t>& b, uint32_t i) { b[i / 64] |= uint64_t{1} << (i % 64); }

static uint32_t target_of(double msr, uint32_t size) {
  // ceil(msr * size) with a tolerance so that 0.8 * 10 is 8, not 9.
  const double t = std::ceil(msr * double(size) - 1e-9);
  return static_cast<uint32_t>(std::clamp(t, 0.0, double(size)));
}

// ---------------------------------------------------------------------------------------------------------------
// Engine implementation

struct Engine::Impl {
  EngineConfig cfg;
  ModeFlags flags;
  std::map<SessionId, std::unique_ptr<Session>> sessions;
  std::deque<Event> events;
  struct Held {
    SessionId session;
    uint64_t generation;  // a session reopened under the same id is a different session
    Buffer buf;
  };
  std::unordered_map<uint64_t, Held> delivered;  // handle -> buffer the application holds
  uint64_t next_generation = 1;
  uint64_t next_handle = 1;
  EngineStats st;
  std::mt19937_64 fault_rng;
  std::uniform_real_distribution<double> uni{0.0, 1.0};
  TimeNs global_next_send = 0;
  SessionId rr_cursor = 0;
  bool trace = false;
  TimeNs clock = 0;  // the `now` of the current call into the engine
  bool use_aes = false;
  // CLOSE datagrams of sessions that are already gone, sealed at close time and sent by the next poll_transmit.
  // Best effort and bounded: when full, the oldest is dropped (counted) and that peer falls back on its
  // peer-death timeout.
  struct Farewell {
    PeerId peer;
    std::vector<uint8_t> bytes;
  };
  static constexpr size_t kMaxFarewells = 256;
  std::deque<Farewell> farewells;

  explicit Impl(const EngineConfig& c)
      : cfg(c), flags(mode_flags(c.mode)), fault_rng(c.faults.seed), use_aes(c.prefer_aes_gcm && crypto::aes_available()) {}

  // Every session's payload budget per packet: the datagram minus the header, tag and the data header.
  uint32_t seg_size() const {
    return cfg.max_datagram - static_cast<uint32_t>(wire::kOverheadBytes + wire::kDataHeaderBytes);
  }
  TimeNs srtt(const Session& s) const { return s.rtt.smoothed(cfg.initial_rtt); }
  TimeNs pto(const Session& s) const {
    const TimeNs var = s.rtt.has_sample ? std::max<TimeNs>(4 * s.rtt.rttvar, 1'000'000) : srtt(s);
    return srtt(s) + var + cfg.ack_delay;
  }
  // An epoch is one smoothed RTT (the paper), stretched at low rates so that it spans at least kMinEpochPackets
  // packets (up to 4 RTTs): with only a handful of packets per RTT, rho_i is mostly exactly 0 or 1 and eqs. 2-3
  // swing between full increase and deep cuts.
  static constexpr double kMinEpochPackets = 16;
  TimeNs epoch_len(const Session& s, const SendJob& j) const {
    const TimeNs rtt = std::max(srtt(s), cfg.min_epoch);
    if (!flags.rate_control || j.rate <= 0) return rtt;
    const double span = kMinEpochPackets * double(cfg.max_datagram) * 1e9 / j.rate;
    return std::clamp<TimeNs>(static_cast<TimeNs>(span), rtt, 4 * rtt);
  }
  // The TLR is a message loss budget; rate control compares it with the packet loss rho_i. A message of k packets
  // is lost (without repair) if any of its packets is, so the packet loss that keeps message loss at TLR is
  // 1 - (1 - TLR)^(1/k), with k the job's mean packets per message (k = 1 gives the paper's equations).
  static double packet_tlr(const SendJob& j, double tlr) {
    if (j.messages_submitted == 0 || j.segments_submitted <= j.messages_submitted) return tlr;
    const double k = double(j.segments_submitted) / double(j.messages_submitted);
    return 1.0 - std::pow(1.0 - std::clamp(tlr, 0.0, 1.0), 1.0 / k);
  }
  double r_max() const { return double(cfg.line_rate_bps) / 8.0; }
  double r_min(const Session& s) const { return double(cfg.max_datagram) * 1e9 / double(srtt(s)); }

  bool push_event(Event ev, bool essential) {
    if (!essential && events.size() >= cfg.max_pending_events) {
      st.events_dropped++;
      return false;
    }
    events.push_back(std::move(ev));
    return true;
  }

  Session* find(SessionId id) {
    auto it = sessions.find(id);
    return it == sessions.end() ? nullptr : it->second.get();
  }

  // ------------------------------------------------------------------ reports

  std::shared_ptr<JobReport> sender_report(const Session& s, SendJob& j, Status status, TimeNs now) {
    j.time_in_class[j.klass] += now - j.class_since;
    j.class_since = now;
    auto r = std::make_shared<JobReport>();
    r->session = s.id;
    r->job = j.id;
    r->is_sender = true;
    r->status = status;
    r->messages = j.n;
    r->packets_sent = j.packets_sent;
    r->packets_retransmitted = j.retransmitted;
    r->bytes_sent = j.bytes_sent;
    r->epochs = j.epochs;
    r->started = j.started;
    r->finished = now;
    const uint64_t resolved = j.packets_acked + j.packets_lost;
    r->measured_loss = resolved ? double(j.packets_lost) / double(resolved) : 0.0;
    std::copy(std::begin(j.time_in_class), std::end(j.time_in_class), r->time_in_class);
    for (const auto& g : j.groups) {
      GroupReport gr{g.spec.group_id, g.spec.size, g.target, g.delivered, g.spec.size - g.delivered, g.unreachable, {}, {}};
      r->delivered += g.delivered;
      r->groups.push_back(std::move(gr));
    }
    r->lost = r->messages - r->delivered;
    return r;
  }

  std::shared_ptr<JobReport> receiver_report(const Session& s, const RecvJob& j, Status status, TimeNs now) {
    auto r = std::make_shared<JobReport>();
    r->session = s.id;
    r->job = j.id;
    r->is_sender = false;
    r->status = status;
    r->messages = j.n;
    r->delivered = j.delivered;
    r->lost = j.n - j.delivered;
    r->measured_loss = j.n ? double(j.n - j.delivered) / double(j.n) : 0.0;
    r->started = j.started;
    r->finished = now;
    for (const auto& g : j.groups) {
      GroupReport gr{g.id, g.size, g.target, g.delivered, g.size - g.delivered, false, {}, {}};
      if (j.ready) {
        for (uint32_t i = 0; i < g.size; ++i) {
          const MessageId m = g.base + i;
          (bit_get(j.delivered_bits, m) ? gr.delivered_ids : gr.lost_ids).push_back(m);
        }
      }
      r->groups.push_back(std::move(gr));
    }
    return r;
  }

  // ------------------------------------------------------------------ job lifecycle

  void finish_send_job(Session& s, JobId id, Status status, TimeNs now, const wire::Done* done = nullptr) {
    auto it = s.send_jobs.find(id);
    if (it == s.send_jobs.end()) return;
    SendJob& j = *it->second;
    for (auto& [m, msg] : j.live) s.send_buffered -= msg.data.size();
    Event ev;
    ev.type = EventType::kJobDone;
    ev.session = s.id;
    ev.job = id;
    ev.status = status;
    auto report = sender_report(s, j, status, now);
    if (done && done->delivered <= j.n) {  // the receiver's counts are authoritative
      report->delivered = done->delivered;
      report->lost = j.n - done->delivered;
      if (done->group_delivered.size() == report->groups.size()) {
        for (size_t i = 0; i < report->groups.size(); ++i) {
          auto& g = report->groups[i];
          g.delivered = std::min(done->group_delivered[i], g.size);
          g.lost = g.size - g.delivered;
        }
      }  // else (very many groups): per-group counts stay "as acknowledged"
    }
    ev.report = std::move(report);
    push_event(std::move(ev), true);
    // Control frames of this job are moot now.
    s.control.erase(std::remove_if(s.control.begin(), s.control.end(),
                                   [&](const ControlFrame& f) {
                                     return f.job == id && f.type != PacketType::kCancel && !f.in_flight;
                                   }),
                    s.control.end());
    s.send_jobs.erase(it);
    s.finished_send.push_back(id);  // ids are not reused while the peer may still know them
    while (s.finished_send.size() > 1024) s.finished_send.pop_front();
  }

  void finish_recv_job(Session& s, JobId id, Status status, TimeNs now, bool tell_sender) {
    auto it = s.recv_jobs.find(id);
    if (it == s.recv_jobs.end()) return;
    RecvJob& j = *it->second;
    for (auto& [m, p] : j.partial) s.recv_used -= p.buf.size();
    for (auto& [m, h] : j.held) s.recv_used -= h.size();
    s.recv_used -= std::min(s.recv_used, j.table_bytes);
    Event ev;
    ev.type = EventType::kJobDone;
    ev.session = s.id;
    ev.job = id;
    ev.status = status;
    ev.report = receiver_report(s, j, status, now);
    push_event(std::move(ev), true);
    if (tell_sender) {
      // The per-group counts ride along when they fit one datagram, so the sender's report can use them.
      const size_t room = (cfg.max_datagram - wire::kOverheadBytes - 20) / 4;
      const size_t n = j.ready && j.groups.size() <= room ? j.groups.size() : 0;
      std::vector<uint8_t> body(16 + (n ? 4 + 4 * n : 0));
      wire::Writer w(body.data(), body.size());
      w.u32(id);
      w.u32(static_cast<uint32_t>(static_cast<int32_t>(status)));
      w.u32(j.delivered);
      w.u32(j.lost);
      if (n) {
        w.u32(static_cast<uint32_t>(n));
        for (const auto& g : j.groups) w.u32(g.delivered);
      }
      queue_control(s, PacketType::kDone, id, std::move(body));
      s.ack_now = true;  // acknowledge the last data before the DONE goes out
    }
    s.recv_jobs.erase(it);
    s.finished_recv.push_back(id);
    while (s.finished_recv.size() > 1024) s.finished_recv.pop_front();
  }

  void fail_session(Session& s, Status status, TimeNs now) {
    std::vector<JobId> ids;
    for (auto& [id, j] : s.send_jobs) ids.push_back(id);
    for (JobId id : ids) finish_send_job(s, id, status, now);
    ids.clear();
    for (auto& [id, j] : s.recv_jobs) ids.push_back(id);
    for (JobId id : ids) finish_recv_job(s, id, status, now, false);
    Event ev;
    ev.type = EventType::kSessionError;
    ev.session = s.id;
    ev.status = status;
    push_event(std::move(ev), true);
    sessions.erase(s.id);
    st.sessions = sessions.size();
  }

  // Seals a CLOSE carrying `status` with the session's key; call before the session is erased.
  void queue_farewell(Session& s, Status status) {
    std::vector<uint8_t> bytes(wire::kHeaderBytes + 4 + wire::kTagBytes);
    wire::Writer w(bytes.data() + wire::kHeaderBytes, 4);
    w.u32(static_cast<uint32_t>(static_cast<int32_t>(status)));
    bytes.resize(seal(s, bytes.data(), PacketType::kClose, 4));
    s.next_pn++;
    if (farewells.size() >= kMaxFarewells) {
      farewells.pop_front();
      st.farewells_dropped++;
    }
    farewells.push_back(Farewell{s.peer, std::move(bytes)});
  }

  void queue_control(Session& s, PacketType type, JobId job, std::vector<uint8_t> body) {
    s.control.push_back(ControlFrame{s.next_ctrl_id++, type, job, std::move(body), false});
  }

  // ------------------------------------------------------------------ sender: scheduling state

  uint64_t ready_key(const SendJob& j, const SendGroup& g, MessageId m, const SendMessage& msg) const {
    // MRDF: least remaining (unacknowledged) bytes first; otherwise message order. Ties by id keep order.
    if (!(flags.mrdf && j.mrdf) || g.exact()) return 0;
    return uint64_t(msg.data.size() - msg.acked_bytes);
  }

  void refresh_ready(SendJob& j, MessageId m, SendMessage& msg) {
    if (msg.in_ready) j.ready.erase({msg.ready_key, m});
    msg.in_ready = false;
    if (msg.need > 0 && j.running) {
      msg.ready_key = ready_key(j, j.groups[msg.group], m, msg);
      j.ready.insert({msg.ready_key, m});
      msg.in_ready = true;
    }
  }

  void abandon_message(Session& s, SendJob& j, MessageId m) {
    auto it = j.live.find(m);
    if (it == j.live.end()) return;
    if (it->second.in_ready) j.ready.erase({it->second.ready_key, m});
    s.send_buffered -= it->second.data.size();
    j.groups[it->second.group].lost++;
    j.pending_abandon.push_back(m);
    j.live.erase(it);
  }

  // A group that met its target sends nothing more: its unfinished messages are given up.
  void on_group_satisfied(Session& s, SendJob& j, uint32_t gi) {
    std::vector<MessageId> rest;
    for (auto& [m, msg] : j.live)
      if (msg.group == gi) rest.push_back(m);
    for (MessageId m : rest) abandon_message(s, j, m);
  }

  void on_data_acked(Session& s, SendJob& j, MessageId m, uint32_t seg) {
    auto it = j.live.find(m);
    if (it == j.live.end()) return;
    SendMessage& msg = it->second;
    if (seg >= msg.segs.size()) return;
    SegState& state = msg.segs[seg];
    if (state == SegState::kAcked) return;
    if (state == SegState::kResend || state == SegState::kNew) msg.need--;
    state = SegState::kAcked;
    msg.acked_bytes += msg.seg_len(seg);
    if (msg.acked_bytes == msg.data.size()) {
      const uint32_t gi = msg.group;
      if (msg.in_ready) j.ready.erase({msg.ready_key, m});
      s.send_buffered -= msg.data.size();
      j.live.erase(it);
      SendGroup& g = j.groups[gi];
      g.delivered++;
      if (g.delivered == g.target && !g.exact()) on_group_satisfied(s, j, gi);
      return;
    }
    refresh_ready(j, m, msg);
  }

  void on_data_lost(Session& s, SendJob& j, MessageId m, uint32_t seg) {
    auto it = j.live.find(m);
    if (it == j.live.end()) return;
    SendMessage& msg = it->second;
    if (seg >= msg.segs.size() || msg.segs[seg] != SegState::kInFlight) return;
    SendGroup& g = j.groups[msg.group];
    // Retransmission criterion: while the group can still afford to lose messages, give this one up (it counts
    // against the allowance, eq. 1's TotalNumLostMsg); once the allowance is used, retransmit. Exact groups have
    // no allowance and always retransmit.
    if (!g.exact() && g.lost < g.allowance()) {
      abandon_message(s, j, m);
      return;
    }
    msg.segs[seg] = SegState::kResend;
    msg.need++;
    msg.hint = std::min(msg.hint, seg);
    refresh_ready(j, m, msg);
  }

  void resolve_packet(Session& s, SentPacket& p, bool acked) {
    if (p.resolved) return;
    p.resolved = true;
    if (p.kind == SentPacket::Kind::kData) s.inflight_bytes -= p.bytes;
    switch (p.kind) {
      case SentPacket::Kind::kData: {
        auto it = s.send_jobs.find(p.job);
        if (it == s.send_jobs.end()) break;
        SendJob& j = *it->second;
        if (acked) {
          j.packets_acked++;
          j.epoch_acked++;
          on_data_acked(s, j, p.msg, p.seg);
        } else {
          j.packets_lost++;
          j.epoch_lost++;
          on_data_lost(s, j, p.msg, p.seg);
        }
        break;
      }
      case SentPacket::Kind::kControl: {
        auto it = std::find_if(s.control.begin(), s.control.end(),
                               [&](const ControlFrame& f) { return f.id == p.ctrl; });
        if (it == s.control.end()) break;
        if (!acked) {  // send it again, backing off so a dead or congested path is not flooded
          it->in_flight = false;
          it->losses = std::min<uint32_t>(it->losses + 1, 16);
          it->not_before = clock + std::min<TimeNs>(pto(s) << std::min<uint32_t>(it->losses - 1, 10), 1'000'000'000);
          break;
        }
        const PacketType type = it->type;
        const JobId job = it->job;
        s.control.erase(it);
        if (type == PacketType::kAnnounce) {
          auto jt = s.send_jobs.find(job);
          if (jt != s.send_jobs.end() && --jt->second->announce_unacked == 0) {
            SendJob& j = *jt->second;
            j.running = true;
            for (auto& [m, msg] : j.live) refresh_ready(j, m, msg);
          }
        }
        break;
      }
      case SentPacket::Kind::kPing:
      case SentPacket::Kind::kAck:
        break;
    }
  }

  void pop_resolved(Session& s) {
    while (!s.sent.empty() && s.sent.front().resolved) {
      s.sent.pop_front();
      s.base_pn++;
    }
  }

  // Declares packets lost: by packet threshold (3) or time threshold (9/8 RTT) behind the largest
  // acknowledged packet, and, when `pto_deadline` is given, everything sent before it (probe timeout).
  void detect_losses(Session& s, TimeNs now, bool on_pto) {
    const TimeNs rtt = std::max(srtt(s), s.rtt.latest);
    const TimeNs time_thresh = rtt + rtt / 8;
    const TimeNs pto_thresh = pto(s);
    for (size_t i = 0; i < s.sent.size(); ++i) {
      SentPacket& p = s.sent[i];
      if (p.resolved) continue;
      const uint64_t pn = s.base_pn + i;
      const bool behind = s.any_acked && pn < s.largest_acked;
      const bool lost = (behind && (pn + 3 <= s.largest_acked || p.sent + time_thresh <= now)) ||
                        (on_pto && std::max(p.sent, s.last_ack_progress) + pto_thresh <= now);
      if (lost) {
        resolve_packet(s, p, false);
      } else if (!behind) {
        break;  // later packets are newer still
      }
    }
    pop_resolved(s);
  }

  // ------------------------------------------------------------------ sender: epochs

  std::vector<control::GroupProgress> progress(const SendJob& j) const {
    std::vector<control::GroupProgress> v;
    v.reserve(j.groups.size());
    for (const auto& g : j.groups) v.push_back({g.spec.size, g.target, g.delivered, g.lost});
    return v;
  }

  void end_epoch(Session& s, SendJob& j, TimeNs now) {
    const uint64_t resolved = j.epoch_acked + j.epoch_lost;
    // rho_i = 1 - acked/sent over the packets whose fate became known in this epoch (see docs/protocol.md).
    const double rho = resolved ? double(j.epoch_lost) / double(resolved) : 0.0;
    const auto prog = progress(j);
    if (flags.dynamic_tlr) j.tlr = control::target_loss_rate(prog);
    if (flags.rate_control && resolved > 0)
      j.rate = control::next_rate(j.rate, rho, packet_tlr(j, j.tlr), cfg.tlr_floor, cfg.reaction_speed, r_max(),
                                  r_min(s));
    if (flags.rate_control) j.rate = std::max(j.rate, std::min(r_min(s), r_max()));
    int k = j.klass;  // static TLR (FixTLR) or static priority (FixPrio) keep the class chosen at the start
    if (flags.slack_priority && flags.dynamic_priority && flags.dynamic_tlr)
      k = control::priority_class(control::target_loss_rate(prog, true), false);
    if (k != j.klass) {
      j.time_in_class[j.klass] += now - j.class_since;
      j.class_since = now;
      j.klass = k;
    }
    j.epochs++;
    if (!j.pending_abandon.empty() && j.epochs % 16 == 0) flush_abandons(s, j);  // bounded delay, few frames
    if (trace) {
      Event ev;
    ev.type = EventType::kEpoch;
      ev.session = s.id;
      ev.job = j.id;
      ev.epoch = EpochSample{s.id, j.id, now, j.tlr, rho, j.rate * 8.0, j.klass};
      push_event(std::move(ev), false);
    }
    j.epoch_start = now;
    j.epoch_acked = j.epoch_lost = 0;
  }

  // ------------------------------------------------------------------ packet building

  size_t seal(Session& s, uint8_t* buf, PacketType type, size_t body_len) {
    const uint64_t pn = s.next_pn;
    const bool header_only = !cfg.payload_auth && type == PacketType::kData;
    const uint8_t flags = static_cast<uint8_t>((use_aes && s.peer_aes_capable ? wire::kFlagAesGcm : 0) |
                                               (use_aes ? wire::kFlagAesCapable : 0) |
                                               (header_only ? wire::kFlagHeaderOnlyAuth : 0));
    wire::write_header(buf, type, s.initiator, s.id, pn, flags);
    wire::set_body_len(buf, static_cast<uint16_t>(body_len));
    const size_t covered = wire::kHeaderBytes + (header_only ? wire::kDataHeaderBytes : body_len);
    crypto::seal(s.key, s.initiator, pn, buf, covered, buf + wire::kHeaderBytes + body_len);
    return wire::kHeaderBytes + body_len + wire::kTagBytes;
  }

  void record_sent(Session& s, SentPacket p, TimeNs now) {
    p.sent = now;
    if (s.sent.empty()) s.base_pn = s.next_pn;
    s.sent.push_back(p);
    s.next_pn++;
    s.last_tx = now;
    pop_resolved(s);
  }

  uint64_t free_window(const Session& s) const {
    return cfg.recv_buffer_bytes > s.recv_used ? cfg.recv_buffer_bytes - s.recv_used : 0;
  }

  size_t build_ack(Session& s, uint8_t* buf, TimeNs now) {
    uint8_t* body = buf + wire::kHeaderBytes;
    const size_t room = cfg.max_datagram - wire::kOverheadBytes;
    const size_t max_ranges = std::min(wire::kMaxAckRanges, 1 + (room - wire::kAckFixedBytes) / 8);
    auto ranges = s.received.ranges(max_ranges);
    wire::Writer w(body, room);
    const TimeNs delay = s.ack_deadline != kNever && now + cfg.ack_delay > s.ack_deadline
                             ? now - (s.ack_deadline - cfg.ack_delay)
                             : 0;
    const uint64_t window = free_window(s);
    w.u64(s.received.largest());
    w.u32(static_cast<uint32_t>(std::min<TimeNs>(delay / 1000, UINT32_MAX)));
    w.u16(static_cast<uint16_t>(ranges.size()));
    w.u16(0);
    w.u64(window);
    w.u32(static_cast<uint32_t>(ranges[0].high - ranges[0].low));
    for (size_t i = 1; i < ranges.size(); ++i) {
      w.u32(static_cast<uint32_t>(ranges[i - 1].low - ranges[i].high - 2));
      w.u32(static_cast<uint32_t>(ranges[i].high - ranges[i].low));
    }
    s.ack_now = false;
    s.ack_deadline = kNever;
    s.unacked_eliciting = 0;
    s.last_advertised_window = window;
    const size_t len = seal(s, buf, PacketType::kAck, w.size());
    record_sent(s, SentPacket{SentPacket::Kind::kAck, true, false, 0, 0, 0, 0, 0, 0}, now);
    return len;
  }

  // Turns pending abandon notices into control frames.
  void flush_abandons(Session& s, SendJob& j) {
    const size_t per = (cfg.max_datagram - wire::kOverheadBytes - wire::kListFixedBytes) / 4;
    size_t i = 0;
    while (i < j.pending_abandon.size()) {
      const size_t n = std::min(per, j.pending_abandon.size() - i);
      std::vector<uint8_t> body(wire::kListFixedBytes + 4 * n);
      wire::Writer w(body.data(), body.size());
      w.u32(j.id);
      w.u16(static_cast<uint16_t>(n));
      w.u16(0);
      for (size_t k = 0; k < n; ++k) w.u32(j.pending_abandon[i + k]);
      queue_control(s, PacketType::kAbandon, j.id, std::move(body));
      i += n;
    }
    j.pending_abandon.clear();
  }

  // Abandon notices are batched: sent when a frame is full, when the job has nothing else to send, or at the end
  // of an epoch (end_epoch flushes).
  bool abandons_due(const SendJob& j) const {
    const size_t per = (cfg.max_datagram - wire::kOverheadBytes - wire::kListFixedBytes) / 4;
    return !j.pending_abandon.empty() && (j.pending_abandon.size() >= per || j.ready.empty());
  }

  // A job's UPDATE and ABANDON frames wait until its announce is acknowledged, so they can never overtake it.
  bool control_ready(const Session& s, const ControlFrame& f) const {
    if (f.type != PacketType::kUpdate && f.type != PacketType::kAbandon) return true;
    auto it = s.send_jobs.find(f.job);
    return it == s.send_jobs.end() || it->second->running;
  }

  bool data_sendable(const Session& s, const SendJob& j) const {
    return j.running && !j.ready.empty() && s.inflight_bytes + cfg.max_datagram <= std::max<uint64_t>(s.peer_window, cfg.max_datagram) &&
           s.sent.size() < ReceivedWindow::kBits / 2;
  }

  TimeNs data_time(const Session& s, const SendJob& j) const {
    return std::max(j.next_send, global_next_send);
  }

  uint8_t dscp_for(const SendJob* j, bool exact) const {
    if (!flags.slack_priority) return cfg.no_priority_dscp;
    if (!j || exact) return cfg.dscp_by_class[0];
    return cfg.dscp_by_class[j->klass];
  }

  size_t build_data(Session& s, SendJob& j, uint8_t* buf, TimeNs now, uint8_t* dscp) {
    const MessageId m = j.ready.begin()->second;
    SendMessage& msg = j.live.at(m);
    uint32_t seg = msg.hint;
    while (seg < msg.segs.size() && msg.segs[seg] != SegState::kNew && msg.segs[seg] != SegState::kResend) ++seg;
    if (seg == msg.segs.size()) {  // cannot happen while need > 0; repair rather than loop
      msg.need = 0;
      refresh_ready(j, m, msg);
      return 0;
    }
    const bool retrans = msg.segs[seg] == SegState::kResend;
    msg.segs[seg] = SegState::kInFlight;
    msg.need--;
    msg.hint = seg + 1;
    const uint32_t len = msg.seg_len(seg);
    uint8_t* body = buf + wire::kHeaderBytes;
    wire::Writer w(body, cfg.max_datagram - wire::kOverheadBytes);
    w.u32(j.id);
    w.u32(m);
    w.u32(static_cast<uint32_t>(msg.data.size()));
    w.u32(seg * msg.seg_size);
    w.u16(static_cast<uint16_t>(msg.seg_size));
    w.u16(0);
    w.bytes(msg.data.data() + size_t{seg} * msg.seg_size, len);
    const size_t total = seal(s, buf, PacketType::kData, w.size());
    const bool exact = j.groups[msg.group].exact();
    *dscp = dscp_for(&j, exact);
    record_sent(s, SentPacket{SentPacket::Kind::kData, false, retrans, len, 0, j.id, m, seg, 0}, now);
    s.inflight_bytes += len;
    j.packets_sent++;
    j.bytes_sent += total;
    if (retrans) j.retransmitted++;
    // Pacing: the job at its rate R, the host at the line rate; a short burst allowance lets drivers batch.
    const double rate = flags.rate_control ? j.rate : r_max();
    const TimeNs burst = 50'000;
    j.next_send = std::max(j.next_send, now > burst ? now - burst : 0) + TimeNs(double(total) * 1e9 / rate);
    global_next_send =
        std::max(global_next_send, now > burst ? now - burst : 0) + TimeNs(double(total) * 1e9 / r_max());
    refresh_ready(j, m, msg);
    return total;
  }

  size_t build_control(Session& s, ControlFrame& f, uint8_t* buf, TimeNs now) {
    std::memcpy(buf + wire::kHeaderBytes, f.body.data(), f.body.size());
    const size_t len = seal(s, buf, f.type, f.body.size());
    f.in_flight = true;
    record_sent(s, SentPacket{SentPacket::Kind::kControl, false, false, 0, 0, f.job, 0, 0, f.id}, now);
    return len;
  }

  size_t build_ping(Session& s, uint8_t* buf, TimeNs now) {
    const size_t len = seal(s, buf, PacketType::kPing, 0);
    s.ping_now = false;
    s.last_ping = now;
    record_sent(s, SentPacket{SentPacket::Kind::kPing, false, false, 0, 0, 0, 0, 0, 0}, now);
    return len;
  }

  // One datagram from session s, or 0.
  size_t transmit_from(Session& s, TimeNs now, uint8_t* buf, uint8_t* dscp) {
    *dscp = flags.slack_priority ? cfg.dscp_by_class[0] : cfg.no_priority_dscp;
    if (s.ack_now || (s.ack_deadline != kNever && s.ack_deadline <= now)) {
      if (s.received.any()) return build_ack(s, buf, now);
      s.ack_now = false;
      s.ack_deadline = kNever;
    }
    for (auto& [id, j] : s.send_jobs)
      if (abandons_due(*j)) flush_abandons(s, *j);
    for (auto& f : s.control)
      if (!f.in_flight && f.not_before <= now && control_ready(s, f)) return build_control(s, f, buf, now);
    if (s.ping_now) return build_ping(s, buf, now);
    SendJob* best = nullptr;
    for (auto& [id, j] : s.send_jobs) {
      if (!data_sendable(s, *j) || data_time(s, *j) > now) continue;
      if (!best || j->next_send < best->next_send) best = j.get();
    }
    if (best) return build_data(s, *best, buf, now, dscp);
    return 0;
  }

  // ------------------------------------------------------------------ receiving

  void on_ack(Session& s, const wire::Ack& a, TimeNs now) {
    s.peer_window = a.window;
    if (a.largest >= s.next_pn) return;  // acknowledges something never sent: ignore
    bool newly_acked_largest = false;
    for (const auto& r : a.ranges) {
      const uint64_t lo = std::max(r.low, s.base_pn);
      const uint64_t hi = std::min(r.high, s.next_pn - 1);
      for (uint64_t pn = lo; pn <= hi && pn >= s.base_pn && pn - s.base_pn < s.sent.size(); ++pn) {
        SentPacket& p = s.sent[pn - s.base_pn];
        if (p.resolved) continue;
        if (pn == a.largest) {
          newly_acked_largest = true;
          s.rtt.on_sample(now - p.sent, TimeNs(a.ack_delay_us) * 1000);
        }
        resolve_packet(s, p, true);
        s.last_ack_progress = now;
      }
    }
    (void)newly_acked_largest;
    if (!s.any_acked || a.largest > s.largest_acked) s.largest_acked = a.largest;
    s.any_acked = true;
    detect_losses(s, now, false);
  }

  size_t max_control_frames() const { return size_t{cfg.max_jobs_per_session} * 4 + 64; }

  // Returns whether the packet is accepted (acknowledged). A job the receiver cannot take is refused with a DONE
  // carrying the reason; while the event or control queue is full, announces are not acknowledged (the sender
  // repeats them later), which keeps both queues bounded however many jobs a peer announces.
  bool on_announce(Session& s, const wire::Announce& a, TimeNs now) {
    if (std::find(s.finished_recv.begin(), s.finished_recv.end(), a.job) != s.finished_recv.end()) return true;
    auto it = s.recv_jobs.find(a.job);
    if (it == s.recv_jobs.end()) {
      if (events.size() + 2 > cfg.max_pending_events || s.control.size() >= max_control_frames()) {
        st.dropped_no_buffer++;
        return false;
      }
      if (a.n_groups > cfg.max_groups_per_job || a.n_messages > cfg.max_messages_per_job || a.n_messages == 0 ||
          s.recv_jobs.size() >= cfg.max_jobs_per_session) {
        st.dropped_malformed++;
        refuse_job(s, a.job, Status::kLimitExceeded);
        return true;
      }
      // The job's bookkeeping (group table, delivered/lost bitmaps) is charged to the receive buffer like data,
      // so a peer cannot make us hold more than the buffer in tables either. A table larger than the whole buffer
      // is refused; one that does not fit right now waits (no ack: the sender repeats the ANNOUNCE).
      const uint64_t table = sizeof(RecvJob) + uint64_t{a.n_groups} * sizeof(RecvGroup) +
                             2 * ((uint64_t{a.n_messages} + 63) / 64) * sizeof(uint64_t);
      if (table > cfg.recv_buffer_bytes) {
        st.dropped_no_buffer++;
        refuse_job(s, a.job, Status::kLimitExceeded);
        return true;
      }
      if (s.recv_used + table > cfg.recv_buffer_bytes) {
        st.dropped_no_buffer++;
        return false;
      }
      auto j = std::make_unique<RecvJob>();
      j->id = a.job;
      j->table_bytes = table;
      s.recv_used += table;
      j->n = a.n_messages;
      j->mrdf = (a.flags & wire::kAnnounceFlagMrdf) != 0;
      j->groups.resize(a.n_groups);
      j->started = now;
      mark_active(s, now);
      it = s.recv_jobs.emplace(a.job, std::move(j)).first;
      st.jobs++;
    }
    RecvJob& j = *it->second;
    if (j.n != a.n_messages || j.groups.size() != a.n_groups) {
      st.dropped_malformed++;
      return true;
    }
    for (size_t i = 0; i < a.entries.size(); ++i) {
      RecvGroup& g = j.groups[a.first_group + i];
      if (g.known) continue;
      g.known = true;
      g.id = a.entries[i].group_id;
      g.size = a.entries[i].size;
      g.target = a.entries[i].target;
      j.groups_known++;
    }
    if (j.ready || j.groups_known != j.groups.size()) return true;
    uint64_t sum = 0;
    for (auto& g : j.groups) {
      g.base = static_cast<uint32_t>(sum);
      sum += g.size;
    }
    if (sum != j.n) {  // inconsistent announce: end the job with a protocol error
      st.dropped_malformed++;
      finish_recv_job(s, j.id, Status::kProtocolError, now, true);
      return true;
    }
    j.delivered_bits.assign((j.n + 63) / 64, 0);
    j.lost_bits.assign((j.n + 63) / 64, 0);
    for (auto& g : j.groups) g.ordered = g.exact();  // in-order delivery is decided once, at the announce
    j.ready = true;
    Event ev;
    ev.type = EventType::kJobStarted;
    ev.session = s.id;
    ev.job = j.id;
    push_event(std::move(ev), true);
    check_recv_complete(s, j, now);
    return true;
  }

  void refuse_job(Session& s, JobId id, Status why) {
    std::vector<uint8_t> body(16);
    wire::Writer w(body.data(), body.size());
    w.u32(id);
    w.u32(static_cast<uint32_t>(static_cast<int32_t>(why)));
    w.u32(0);
    w.u32(0);
    queue_control(s, PacketType::kDone, id, std::move(body));
    s.finished_recv.push_back(id);
    while (s.finished_recv.size() > 1024) s.finished_recv.pop_front();
  }

  void check_recv_complete(Session& s, RecvJob& j, TimeNs now) {
    for (const auto& g : j.groups)
      if (g.delivered < g.target && g.delivered + g.lost < g.size) return;
    finish_recv_job(s, j.id, Status::kOk, now, true);
  }

  void deliver(Session& s, RecvJob& j, RecvGroup& g, MessageId m, Buffer buf) {
    bit_set(j.delivered_bits, m);
    g.delivered++;
    j.delivered++;
    const uint64_t handle = next_handle++;
    Event ev;
    ev.type = EventType::kMessage;
    ev.session = s.id;
    ev.job = j.id;
    ev.message = m;
    ev.group_id = g.id;
    ev.len = buf.size();
    ev.handle = handle;
    s.app_held += buf.size();
    auto& slot = delivered[handle];
    slot.session = s.id;
    slot.generation = s.generation;
    slot.buf = std::move(buf);
    ev.data = slot.buf.data();
    push_event(std::move(ev), true);
  }

  // Delivers an ordered group's held messages from next_in_order on, skipping ids already resolved.
  void advance_in_order(Session& s, RecvJob& j, RecvGroup& g) {
    while (g.next_in_order < g.size) {
      const MessageId m = g.base + g.next_in_order;
      if (bit_get(j.delivered_bits, m) || bit_get(j.lost_bits, m)) {
        g.next_in_order++;
        continue;
      }
      auto h = j.held.find(m);
      if (h == j.held.end()) return;
      Buffer b = std::move(h->second);
      j.held.erase(h);
      deliver(s, j, g, m, std::move(b));
      g.next_in_order++;
    }
  }

  // Returns true when the packet was accepted (and so may be acknowledged).
  bool on_data(Session& s, const wire::Data& d, TimeNs now) {
    auto it = s.recv_jobs.find(d.job);
    if (it == s.recv_jobs.end() || !it->second->ready) {
      if (std::find(s.finished_recv.begin(), s.finished_recv.end(), d.job) != s.finished_recv.end()) return true;
      st.dropped_unknown_job++;
      return false;
    }
    RecvJob& j = *it->second;
    if (d.msg >= j.n || d.msg_len > cfg.max_message_bytes) {
      st.dropped_malformed++;
      return false;
    }
    if (bit_get(j.delivered_bits, d.msg) || bit_get(j.lost_bits, d.msg) || j.held.count(d.msg)) return true;
    RecvGroup& g = j.groups[j.group_of(d.msg)];
    auto pit = j.partial.find(d.msg);
    const bool head_of_line = g.ordered && d.msg == g.base + g.next_in_order;
    if (pit == j.partial.end()) {
      // Admission: the whole message is charged to the receive buffer up front; the next in-order message of an
      // exact group is always admitted so that order can never deadlock the buffer.
      const uint64_t charge = d.msg_len;
      // (Only engine-held bytes can cause that deadlock: bytes the application holds still push back.)
      // The exception is bounded: at most one more buffer's worth in total, however many ordered groups.
      const bool fits = s.recv_used + charge <= cfg.recv_buffer_bytes;
      const bool hol_fits = head_of_line && s.app_held + charge <= cfg.recv_buffer_bytes &&
                            s.recv_used + charge <= 2 * cfg.recv_buffer_bytes;
      if (!fits && !hol_fits) {
        st.dropped_no_buffer++;
        return false;
      }
      RecvMessage rm;
      rm.len = d.msg_len;
      rm.seg_size = d.seg_size;
      rm.nseg = (d.msg_len + d.seg_size - 1) / d.seg_size;
      rm.bits.assign((rm.nseg + 63) / 64, 0);
      rm.buf.resize(d.msg_len);
      s.recv_used += charge;
      pit = j.partial.emplace(d.msg, std::move(rm)).first;
    }
    RecvMessage& rm = pit->second;
    if (rm.len != d.msg_len || rm.seg_size != d.seg_size) {
      st.dropped_malformed++;
      return false;
    }
    const uint32_t seg = d.offset / d.seg_size;
    if (bit_get(rm.bits, seg)) return true;  // duplicate segment
    if (rm.got + 1 == rm.nseg && events.size() >= cfg.max_pending_events) {
      st.dropped_no_buffer++;  // the application is not draining events: push back on the sender
      return false;
    }
    std::memcpy(rm.buf.data() + d.offset, d.payload, d.payload_len);
    bit_set(rm.bits, seg);
    if (++rm.got < rm.nseg) return true;
    Buffer buf = std::move(rm.buf);
    j.partial.erase(pit);
    if (!g.ordered) {
      deliver(s, j, g, d.msg, std::move(buf));
    } else {
      j.held.emplace(d.msg, std::move(buf));
      advance_in_order(s, j, g);
    }
    check_recv_complete(s, j, now);
    return true;
  }

  // Frames for a job whose announce is still incomplete are not acknowledged, so the sender repeats them.
  bool job_pending_or_finished(const Session& s, JobId job, bool* accepted) const {
    auto it = s.recv_jobs.find(job);
    if (it != s.recv_jobs.end() && it->second->ready) return false;
    *accepted = std::find(s.finished_recv.begin(), s.finished_recv.end(), job) != s.finished_recv.end();
    return true;
  }

  bool on_abandon(Session& s, const wire::Abandon& a, TimeNs now) {
    bool accepted;
    if (job_pending_or_finished(s, a.job, &accepted)) return accepted;
    auto it = s.recv_jobs.find(a.job);
    RecvJob& j = *it->second;
    for (MessageId m : a.msgs) {
      if (m >= j.n || bit_get(j.delivered_bits, m) || bit_get(j.lost_bits, m)) continue;
      RecvGroup& g = j.groups[j.group_of(m)];
      if (g.exact()) {  // exact messages are never given up
        st.dropped_malformed++;
        continue;
      }
      bit_set(j.lost_bits, m);
      g.lost++;
      j.lost++;
      if (auto p = j.partial.find(m); p != j.partial.end()) {
        s.recv_used -= p->second.buf.size();
        j.partial.erase(p);
      }
      Event ev;
    ev.type = EventType::kMessageLost;
      ev.session = s.id;
      ev.job = j.id;
      ev.message = m;
      ev.group_id = g.id;
      push_event(std::move(ev), false);
    }
    check_recv_complete(s, j, now);
    return true;
  }

  bool on_update(Session& s, const wire::Update& u, TimeNs now) {
    bool accepted;
    if (job_pending_or_finished(s, u.job, &accepted)) return accepted;
    RecvJob& j = *s.recv_jobs.find(u.job)->second;
    for (const auto& e : u.entries) {
      if (e.group_index >= j.groups.size() || e.target > j.groups[e.group_index].size) {
        st.dropped_malformed++;
        continue;
      }
      RecvGroup& g = j.groups[e.group_index];
      g.target = e.target;
      // A group raised to MSR 1 mid-job becomes reliable but not ordered (earlier messages were already
      // delivered out of order); a group lowered below 1 stops ordering and hands over what it held.
      if (g.ordered && !g.exact()) {
        g.ordered = false;
        for (auto h = j.held.lower_bound(g.base); h != j.held.end() && h->first < g.base + g.size;) {
          Buffer b = std::move(h->second);
          const MessageId m = h->first;
          h = j.held.erase(h);
          deliver(s, j, g, m, std::move(b));
        }
      }
    }
    check_recv_complete(s, j, now);
    return true;
  }

  void handle_datagram(const uint8_t* data, size_t len, PeerId from, TimeNs now) {
    st.datagrams_in++;
    st.bytes_in += len;
    wire::Header h;
    if (wire::parse_header(data, len, &h) != wire::ParseError::kOk) {
      st.dropped_malformed++;
      return;
    }
    Session* sp = find(h.session);
    if (!sp) {
      st.dropped_unknown_session++;
      return;
    }
    Session& s = *sp;
    if (h.from_initiator == s.initiator) {  // our own direction reflected back
      st.dropped_auth++;
      return;
    }
    const auto check = s.received.check(h.packet_number);
    if (check != ReceivedWindow::Check::kNew) {
      st.dropped_replay_or_old++;  // (not authenticated yet: must not change any state)
      return;
    }
    const size_t body_len = h.body_len;
    const bool header_only = (h.flags & wire::kFlagHeaderOnlyAuth) != 0;
    if (header_only && body_len < wire::kDataHeaderBytes) {
      st.dropped_auth++;
      return;
    }
    const size_t covered = wire::kHeaderBytes + (header_only ? wire::kDataHeaderBytes : body_len);
    if (!crypto::verify(s.key, h.from_initiator, h.packet_number, data, covered, data + wire::kHeaderBytes + body_len)) {
      st.dropped_auth++;
      return;
    }
    if (header_only && cfg.payload_auth) {
      // Policy: this endpoint requires payload tags. The header tag verified, so this is the genuine peer
      // configured with payload_auth off, not an attacker: fail the session on both ends at once instead of
      // letting every data packet be dropped until a timeout.
      st.dropped_auth++;
      st.auth_policy_mismatches++;
      queue_farewell(s, Status::kProtocolError);
      fail_session(s, Status::kProtocolError, now);
      return;  // s is gone
    }
    s.peer_aes_capable = (h.flags & wire::kFlagAesCapable) != 0;  // authenticated: the peer says what it can check
    const uint8_t* body = data + wire::kHeaderBytes;
    bool accepted = true;
    bool eliciting = true;
    wire::ParseError err = wire::ParseError::kOk;
    switch (h.type) {
      case PacketType::kData: {
        wire::Data d;
        err = wire::parse_data(body, body_len, &d);
        if (err == wire::ParseError::kOk) accepted = on_data(s, d, now);
        break;
      }
      case PacketType::kAck: {
        eliciting = false;
        wire::Ack a;
        err = wire::parse_ack(body, body_len, &a);
        if (err == wire::ParseError::kOk) on_ack(s, a, now);
        break;
      }
      case PacketType::kAnnounce: {
        wire::Announce a;
        err = wire::parse_announce(body, body_len, &a);
        if (err == wire::ParseError::kOk) accepted = on_announce(s, a, now);
        break;
      }
      case PacketType::kUpdate: {
        wire::Update u;
        err = wire::parse_update(body, body_len, &u);
        if (err == wire::ParseError::kOk) accepted = on_update(s, u, now);
        break;
      }
      case PacketType::kAbandon: {
        wire::Abandon a;
        err = wire::parse_abandon(body, body_len, &a);
        if (err == wire::ParseError::kOk) accepted = on_abandon(s, a, now);
        break;
      }
      case PacketType::kDone: {
        wire::Done d;
        err = wire::parse_done(body, body_len, &d);
        if (err == wire::ParseError::kOk) {
          const Status status = d.status == 0 ? Status::kOk
                                : d.status < 0 && d.status >= static_cast<int32_t>(Status::kInternal)
                                    ? static_cast<Status>(d.status)
                                    : Status::kProtocolError;
          finish_send_job(s, d.job, status, now, &d);
        }
        break;
      }
      case PacketType::kPing:
        err = body_len == 0 ? wire::ParseError::kOk : wire::ParseError::kBadBody;
        break;
      case PacketType::kClose: {
        int32_t code;
        err = wire::parse_close(body, body_len, &code);
        if (err == wire::ParseError::kOk) {
          // The peer says why (kClosed for an ordinary close); anything unknown reads as a protocol error.
          const Status why = code == static_cast<int32_t>(Status::kClosed) ||
                                     code == static_cast<int32_t>(Status::kProtocolError)
                                 ? static_cast<Status>(code)
                                 : code == 0 ? Status::kClosed : Status::kProtocolError;
          fail_session(s, why, now);
          return;  // s is gone
        }
        break;
      }
      case PacketType::kCancel: {
        uint32_t job;
        err = wire::parse_cancel(body, body_len, &job);
        if (err == wire::ParseError::kOk) {
          if (s.recv_jobs.count(job)) {
            finish_recv_job(s, job, Status::kClosed, now, false);
          } else if (std::find(s.finished_recv.begin(), s.finished_recv.end(), job) == s.finished_recv.end()) {
            // The CANCEL overtook the job's ANNOUNCE (lost or reordered; the sender may still repeat it):
            // remember the id so a late ANNOUNCE cannot start a job nobody will ever send or cancel again.
            s.finished_recv.push_back(job);
            while (s.finished_recv.size() > 1024) s.finished_recv.pop_front();
          }
        }
        break;
      }
    }
    if (err != wire::ParseError::kOk) {
      st.dropped_malformed++;
      return;
    }
    s.last_rx = now;
    // Authenticated and the newest packet so far: follow the peer's address (e.g. NAT rebinding). Reordered old
    // packets from a previous path cannot pull the session back.
    if (from != s.peer && (!s.received.any() || h.packet_number > s.received.largest())) s.peer = from;
    if (!accepted) {
      // Tell the sender we are alive and how much room is left, without acknowledging the dropped packet.
      if (s.received.any()) s.ack_now = true;
      return;
    }
    const bool in_order = !s.received.any() || h.packet_number == s.received.largest() + 1;
    s.received.mark(h.packet_number);
    if (!eliciting) return;
    s.unacked_eliciting++;
    if (s.unacked_eliciting >= cfg.ack_every || !in_order || h.type != PacketType::kData) {
      s.ack_now = true;
    } else if (s.ack_deadline == kNever) {
      s.ack_deadline = now + cfg.ack_delay;
    }
  }

  // ------------------------------------------------------------------ timers

  // Probe timeout: fires only when acknowledgements stopped making progress for a PTO, not merely because a
  // packet is old (a growing queue inflates the RTT; while acks keep arriving, the packet and time thresholds
  // detect losses).
  TimeNs loss_deadline(const Session& s) const {
    for (size_t i = 0; i < s.sent.size(); ++i)
      if (!s.sent[i].resolved) return std::max(s.sent[i].sent, s.last_ack_progress) + pto(s);
    return kNever;
  }

  // A session that was idle (no jobs, so nobody pinged) starts its peer-death clock when a job starts, not at the
  // last packet heard, which may be long ago.
  void mark_active(Session& s, TimeNs now) {
    if (!s.has_active_jobs()) s.active_since = now;
  }

  TimeNs liveness_deadline(const Session& s) const {
    if (s.has_active_jobs()) return std::max(s.last_rx, s.active_since) + cfg.peer_death_timeout;
    if (cfg.idle_timeout == 0) return kNever;
    return std::max({s.last_rx, s.last_tx, s.created}) + cfg.idle_timeout;
  }

  TimeNs keepalive_deadline(const Session& s) const {
    if (!s.has_active_jobs()) return kNever;
    // Probe a peer we have not heard from for a quarter of the peer-death timeout (repeating at that pace).
    return std::max({s.last_rx, s.last_ping, s.active_since}) + std::max<TimeNs>(cfg.peer_death_timeout / 4, 1);
  }

  TimeNs session_timeout(const Session& s) const {
    TimeNs t = std::min({loss_deadline(s), liveness_deadline(s), keepalive_deadline(s)});
    if (s.ack_now || s.ping_now) return 0;
    t = std::min(t, s.ack_deadline);
    for (const auto& f : s.control)
      if (!f.in_flight && control_ready(s, f)) t = std::min(t, f.not_before);
    for (const auto& [id, j] : s.send_jobs) {
      if (abandons_due(*j)) return 0;
      if (j->running) t = std::min(t, j->epoch_start + epoch_len(s, *j));
      if (data_sendable(s, *j)) t = std::min(t, data_time(s, *j));
    }
    return t;
  }

  void session_timers(Session& s, TimeNs now) {
    if (liveness_deadline(s) <= now) {
      fail_session(s, s.has_active_jobs() ? Status::kPeerDead : Status::kIdleTimeout, now);
      return;
    }
    if (loss_deadline(s) <= now) detect_losses(s, now, true);
    if (keepalive_deadline(s) <= now) s.ping_now = true;
    for (auto& [id, j] : s.send_jobs)
      if (j->running && j->epoch_start + epoch_len(s, *j) <= now) end_epoch(s, *j, now);
  }
};

// ---------------------------------------------------------------------------------------------------------------
// Public API

Engine::Engine(const EngineConfig& cfg) : impl_(std::make_unique<Impl>(cfg)) { crypto::init(); }
Engine::~Engine() = default;

const EngineConfig& Engine::config() const { return impl_->cfg; }

Status Engine::open_session(SessionId id, const uint8_t key[kKeyBytes], PeerId peer, bool initiator, TimeNs now) {
  auto& I = *impl_;
  if (!key) return Status::kInvalidArgument;
  if (I.sessions.count(id)) return Status::kAlreadyExists;
  if (I.sessions.size() >= I.cfg.max_sessions) return Status::kLimitExceeded;
  auto s = std::make_unique<Session>();
  s->id = id;
  crypto::prepare(&s->key, key);
  s->generation = I.next_generation++;
  s->peer = peer;
  s->initiator = initiator;
  s->created = s->last_rx = s->last_tx = now;
  s->peer_window = I.cfg.recv_buffer_bytes;
  I.sessions.emplace(id, std::move(s));
  I.st.sessions = I.sessions.size();
  return Status::kOk;
}

Status Engine::close_session(SessionId id, TimeNs now) {
  auto& I = *impl_;
  Session* s = I.find(id);
  if (!s) return Status::kNotFound;
  // The peer is told with a sealed CLOSE (best effort: if it is lost, the peer notices through its peer-death
  // timeout). Jobs end with kClosed.
  I.queue_farewell(*s, Status::kClosed);
  std::vector<JobId> ids;
  for (auto& [jid, j] : s->send_jobs) ids.push_back(jid);
  for (JobId jid : ids) I.finish_send_job(*s, jid, Status::kClosed, now);
  ids.clear();
  for (auto& [jid, j] : s->recv_jobs) ids.push_back(jid);
  for (JobId jid : ids) I.finish_recv_job(*s, jid, Status::kClosed, now, false);
  I.sessions.erase(id);
  I.st.sessions = I.sessions.size();
  return Status::kOk;
}

Status Engine::set_peer(SessionId id, PeerId peer) {
  Session* s = impl_->find(id);
  if (!s) return Status::kNotFound;
  s->peer = peer;
  return Status::kOk;
}

Status Engine::start_job(SessionId sid, const JobSpec& spec, TimeNs now) {
  auto& I = *impl_;
  Session* sp = I.find(sid);
  if (!sp) return Status::kNotFound;
  Session& s = *sp;
  if (s.send_jobs.count(spec.job_id) ||
      std::find(s.finished_send.begin(), s.finished_send.end(), spec.job_id) != s.finished_send.end())
    return Status::kAlreadyExists;
  if (s.send_jobs.size() >= I.cfg.max_jobs_per_session) return Status::kLimitExceeded;
  if (spec.groups.empty() || spec.groups.size() > I.cfg.max_groups_per_job) return Status::kInvalidArgument;
  uint64_t total = 0;
  for (const auto& g : spec.groups) {
    if (g.size == 0 || !(g.msr >= 0.0 && g.msr <= 1.0)) return Status::kInvalidArgument;
    total += g.size;
  }
  if (total > I.cfg.max_messages_per_job) return Status::kLimitExceeded;
  auto j = std::make_unique<SendJob>();
  j->id = spec.job_id;
  j->n = static_cast<uint32_t>(total);
  j->mrdf = spec.mrdf;
  j->submitted.assign((total + 63) / 64, 0);
  uint32_t base = 0;
  for (const auto& gs : spec.groups) {
    SendGroup g;
    g.spec = gs;
    g.base = base;
    g.target = target_of(gs.msr, gs.size);
    base += gs.size;
    j->groups.push_back(g);
  }
  const auto prog = I.progress(*j);
  j->tlr = j->tlr0 = control::target_loss_rate(prog);
  j->approx_tlr0 = control::target_loss_rate(prog, true);
  j->klass = I.flags.slack_priority ? control::priority_class(j->approx_tlr0, false) : 0;
  j->rate = I.r_max();  // start aggressively at the line rate; eq. 3 brings it down under loss
  j->started = j->class_since = j->epoch_start = j->next_send = now;
  // Announce: group table in chunks; data waits until every chunk is acknowledged.
  const size_t per = (I.cfg.max_datagram - wire::kOverheadBytes - wire::kAnnounceFixedBytes) / wire::kAnnounceEntryBytes;
  for (size_t first = 0; first < j->groups.size(); first += per) {
    const size_t n = std::min(per, j->groups.size() - first);
    std::vector<uint8_t> body(wire::kAnnounceFixedBytes + n * wire::kAnnounceEntryBytes);
    wire::Writer w(body.data(), body.size());
    w.u32(j->id);
    w.u32(j->n);
    w.u32(static_cast<uint32_t>(j->groups.size()));
    w.u32(static_cast<uint32_t>(first));
    w.u16(static_cast<uint16_t>(n));
    w.u16(spec.mrdf ? wire::kAnnounceFlagMrdf : 0);
    for (size_t i = first; i < first + n; ++i) {
      w.u64(j->groups[i].spec.group_id);
      w.u32(j->groups[i].spec.size);
      w.u32(j->groups[i].target);
    }
    I.queue_control(s, PacketType::kAnnounce, j->id, std::move(body));
    j->announce_unacked++;
  }
  // Groups with target 0 are satisfied from the start.
  I.mark_active(s, now);
  s.send_jobs.emplace(spec.job_id, std::move(j));
  I.st.jobs++;
  return Status::kOk;
}

Status Engine::submit(SessionId sid, JobId jid, uint32_t group_index, uint32_t index, const uint8_t* data,
                      size_t len, TimeNs now) {
  auto& I = *impl_;
  Session* sp = I.find(sid);
  if (!sp) return Status::kNotFound;
  Session& s = *sp;
  auto it = s.send_jobs.find(jid);
  if (it == s.send_jobs.end()) return Status::kNotFound;
  SendJob& j = *it->second;
  if (group_index >= j.groups.size() || index >= j.groups[group_index].spec.size) return Status::kInvalidArgument;
  if (len == 0 || !data) return Status::kInvalidArgument;
  if (len > I.cfg.max_message_bytes) return Status::kLimitExceeded;
  SendGroup& g = j.groups[group_index];
  const MessageId m = g.base + index;
  if (bit_get(j.submitted, m)) return Status::kAlreadyExists;
  if (g.satisfied() && !g.exact()) {  // nothing more is needed from this group
    bit_set(j.submitted, m);
    g.lost++;
    j.pending_abandon.push_back(m);
    return Status::kOk;
  }
  if (s.send_buffered + len > I.cfg.send_buffer_bytes) return Status::kWouldBlock;
  bit_set(j.submitted, m);
  SendMessage msg;
  msg.group = group_index;
  msg.data.assign(data, data + len);
  msg.seg_size = I.seg_size();
  const uint32_t nseg = static_cast<uint32_t>((len + msg.seg_size - 1) / msg.seg_size);
  msg.segs.assign(nseg, SegState::kNew);
  msg.need = nseg;
  j.messages_submitted++;
  j.segments_submitted += nseg;
  s.send_buffered += len;
  auto [mit, ok] = j.live.emplace(m, std::move(msg));
  I.refresh_ready(j, m, mit->second);
  (void)now;
  return Status::kOk;
}

Status Engine::update_msr(SessionId sid, JobId jid, const std::vector<std::pair<uint32_t, double>>& msrs, TimeNs now) {
  auto& I = *impl_;
  Session* sp = I.find(sid);
  if (!sp) return Status::kNotFound;
  Session& s = *sp;
  auto it = s.send_jobs.find(jid);
  if (it == s.send_jobs.end()) return Status::kNotFound;
  SendJob& j = *it->second;
  for (const auto& [gi, msr] : msrs)
    if (gi >= j.groups.size() || !(msr >= 0.0 && msr <= 1.0)) return Status::kInvalidArgument;
  std::vector<uint8_t> body(wire::kListFixedBytes);
  wire::Writer hdr(body.data(), body.size());
  hdr.u32(jid);
  hdr.u16(static_cast<uint16_t>(msrs.size()));
  hdr.u16(0);
  const size_t per = (I.cfg.max_datagram - wire::kOverheadBytes - wire::kListFixedBytes) / wire::kUpdateEntryBytes;
  std::vector<wire::UpdateEntry> entries;
  for (const auto& [gi, msr] : msrs) {
    SendGroup& g = j.groups[gi];
    uint32_t t = target_of(msr, g.spec.size);
    // Messages already given up cannot be brought back: clamp, and say so in the report.
    g.unreachable = t > g.spec.size - g.lost;
    if (g.unreachable) t = g.spec.size - g.lost;
    g.target = t;
    entries.push_back({gi, t});
    if (g.satisfied() && !g.exact()) I.on_group_satisfied(s, j, gi);
  }
  for (size_t first = 0; first < entries.size(); first += per) {
    const size_t n = std::min(per, entries.size() - first);
    std::vector<uint8_t> b(wire::kListFixedBytes + n * wire::kUpdateEntryBytes);
    wire::Writer w(b.data(), b.size());
    w.u32(jid);
    w.u16(static_cast<uint16_t>(n));
    w.u16(0);
    for (size_t i = first; i < first + n; ++i) {
      w.u32(entries[i].group_index);
      w.u32(entries[i].target);
    }
    I.queue_control(s, PacketType::kUpdate, jid, std::move(b));
  }
  (void)now;
  return Status::kOk;
}

Status Engine::cancel_job(SessionId sid, JobId jid, TimeNs now) {
  auto& I = *impl_;
  Session* sp = I.find(sid);
  if (!sp) return Status::kNotFound;
  if (!sp->send_jobs.count(jid)) return Status::kNotFound;
  std::vector<uint8_t> body(4);
  wire::Writer w(body.data(), body.size());
  w.u32(jid);
  I.finish_send_job(*sp, jid, Status::kClosed, now);
  I.queue_control(*sp, PacketType::kCancel, jid, std::move(body));
  return Status::kOk;
}

Status Engine::release(uint64_t handle) {
  auto& I = *impl_;
  auto it = I.delivered.find(handle);
  if (it == I.delivered.end()) return Status::kNotFound;
  Session* s = I.find(it->second.session);
  if (s && s->generation == it->second.generation) {
    s->recv_used -= std::min<uint64_t>(s->recv_used, it->second.buf.size());
    s->app_held -= std::min<uint64_t>(s->app_held, it->second.buf.size());
    // Reopen a window the sender may be waiting on.
    if (s->last_advertised_window < I.cfg.recv_buffer_bytes / 4) s->ack_now = true;
  }
  I.delivered.erase(it);
  return Status::kOk;
}

void Engine::on_datagram(const uint8_t* data, size_t len, PeerId from, TimeNs now) {
  auto& I = *impl_;
  I.clock = now;
  if (!data && len) return;
  if (I.cfg.faults.drop_incoming > 0 && I.uni(I.fault_rng) < I.cfg.faults.drop_incoming) {
    I.st.dropped_fault_in++;
    return;
  }
  I.handle_datagram(data, len, from, now);
}

bool Engine::poll_transmit(TimeNs now, uint8_t* buf, size_t cap, Transmit* out) {
  auto& I = *impl_;
  I.clock = now;
  if (!buf || !out || cap < I.cfg.max_datagram) return false;
  if (!I.farewells.empty()) {
    Impl::Farewell f = std::move(I.farewells.front());
    I.farewells.pop_front();
    std::memcpy(buf, f.bytes.data(), f.bytes.size());
    I.st.datagrams_out++;
    I.st.bytes_out += f.bytes.size();
    out->peer = f.peer;
    out->dscp = I.dscp_for(nullptr, true);
    out->len = f.bytes.size();
    return true;
  }
  if (I.sessions.empty()) return false;
  // Round-robin over sessions, starting after the one served last. Datagrams swallowed by fault injection are
  // built and paced like real ones; a bounded number are tried per call.
  for (int attempt = 0; attempt < 64; ++attempt) {
    auto it = I.sessions.upper_bound(I.rr_cursor);
    size_t visited = 0;
    size_t len = 0;
    uint8_t dscp = 0;
    Session* from = nullptr;
    while (visited < I.sessions.size()) {
      if (it == I.sessions.end()) it = I.sessions.begin();
      Session& s = *it->second;
      len = I.transmit_from(s, now, buf, &dscp);
      if (len) {
        from = &s;
        break;
      }
      ++it;
      ++visited;
    }
    if (!from) return false;
    I.rr_cursor = from->id;
    I.st.datagrams_out++;
    I.st.bytes_out += len;
    if (I.cfg.faults.drop_outgoing > 0 && I.uni(I.fault_rng) < I.cfg.faults.drop_outgoing) {
      I.st.dropped_fault_out++;
      continue;
    }
    out->peer = from->peer;
    out->dscp = dscp;
    out->len = len;
    return true;
  }
  return false;
}

TimeNs Engine::next_timeout() const {
  TimeNs t = impl_->farewells.empty() ? kNever : impl_->clock;
  for (const auto& [id, s] : impl_->sessions) t = std::min(t, impl_->session_timeout(*s));
  return t;
}

void Engine::on_timeout(TimeNs now) {
  auto& I = *impl_;
  I.clock = now;
  std::vector<SessionId> ids;
  for (const auto& [id, s] : I.sessions) ids.push_back(id);
  for (SessionId id : ids)
    if (Session* s = I.find(id)) I.session_timers(*s, now);
}

bool Engine::poll_event(Event* ev) {
  auto& I = *impl_;
  if (!ev || I.events.empty()) return false;
  *ev = std::move(I.events.front());
  I.events.pop_front();
  return true;
}

void Engine::set_trace_epochs(bool on) { impl_->trace = on; }

EngineStats Engine::stats() const {
  EngineStats s = impl_->st;
  s.sessions = impl_->sessions.size();
  for (const auto& [id, sess] : impl_->sessions) {
    s.send_buffered += sess->send_buffered;
    s.recv_buffered += sess->recv_used;
  }
  return s;
}

}  // namespace netapprox::atp
