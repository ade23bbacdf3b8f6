// The engine: sessions, the dispatch of each datagram to its job, what sending a packet means for the session,
// timers, and the public API. The protocol's parts live in their own units: recovery (packet log, loss detection,
// RTT), rate_control + rate_law (epochs, TLR, the rate law), send_job (retransmission criterion, MRDF scheduling
// within a job), recv_job (reassembly, in-order delivery, completion), scheduler (which session and job sends next
// across sessions, and in which class), packet_builder (the bytes of every packet: header, tag and bodies).
#include "core/engine.hpp"

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <unordered_map>

#include "core/crypto.hpp"
#include "core/packet_builder.hpp"
#include "core/ring.hpp"
#include "core/scheduler.hpp"
#include "core/session.hpp"

namespace netapprox::atp {

using wire::PacketType;
constexpr TimeNs kSecond = 1'000'000'000;

// ---------------------------------------------------------------------------------------------------------------
// Names, config

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

std::string EngineConfig::validate() const {
  if (line_rate_bps < 1'000'000) return "line_rate_bps must be at least 1 Mbit/s";
  if (max_datagram < wire::kMinDatagram || max_datagram > wire::kMaxDatagram)
    return "max_datagram must be in [256, 65507]";
  if (!(reaction_speed > 0 && reaction_speed <= 1)) return "reaction_speed must be in (0, 1]";
  if (!(tlr_floor >= 0 && tlr_floor < 1)) return "tlr_floor must be in [0, 1)";
  if (initial_rtt == 0 || min_epoch == 0) return "initial_rtt and min_epoch must be positive";
  if (ack_every == 0) return "ack_every must be positive";
  if (wire_overhead_bytes > 1024) return "wire_overhead_bytes must be in [0, 1024]";
  if (max_report_ranges > kMaxReportRangesLimit) return "max_report_ranges must be in [0, 16777216]";
  if (peer_death_timeout == 0) return "peer_death_timeout must be positive";
  if (recv_buffer_bytes < 65536 || send_buffer_bytes < 65536) return "buffers must be at least 64 KiB";
  if (max_message_bytes == 0 || max_message_bytes > (1U << 30)) return "max_message_bytes must be in [1, 1 GiB]";
  if (max_sessions == 0 || max_jobs_per_session == 0 || max_messages_per_job == 0 || max_groups_per_job == 0)
    return "limits must be positive";
  if (max_pending_events < 16) return "max_pending_events must be at least 16";
  for (uint8_t d : dscp_by_class)
    if (d > 63) return "DSCP values must be in [0, 63]";
  if (no_priority_dscp > 63) return "no_priority_dscp must be in [0, 63]";
  if (!(needy_class0_fraction >= 0 && needy_class0_fraction <= 1)) return "needy_class0_fraction must be in [0, 1]";
  if (!size_class::bounds_valid(size_class_bytes)) return "size_class_bytes must be positive and increasing";
  if (!mode_valid(mode)) return "unknown mode";
  if (!(faults.drop_outgoing >= 0 && faults.drop_outgoing < 1) ||
      !(faults.drop_incoming >= 0 && faults.drop_incoming < 1))
    return "fault drop fractions must be in [0, 1)";
  return "";
}

// ---------------------------------------------------------------------------------------------------------------
// Engine implementation

struct Engine::Impl {
  EngineConfig cfg;
  ModeFlags flags;
  const bool mrdf_across;  // MRDF across sessions and jobs (EngineConfig::mrdf_across_jobs in a mode with MRDF)
  const rate_law::RateLaw& law;
  std::map<SessionId, std::unique_ptr<Session>> sessions;
  // The recent peak RTT (Recovery::recent_peak_rtt) of ended sessions, per peer: a new job's probe timeout starts
  // from what sessions to the same peer saw (as TCP's per-destination metrics), so its ANNOUNCE is not probed while
  // it waits in a queue the path is known to build. Bounded; entries older than two peak windows are ignored.
  struct PathMemory {
    TimeNs peak, at;
  };
  std::unordered_map<PeerId, PathMemory> path_memory;
  static constexpr size_t kMaxPathMemory = 4096;
  Ring<Event> events;  // bounded by max_pending_events (essential events excepted, see push_event)
  struct Held {
    SessionId session;
    uint64_t generation;  // a session reopened under the same id is a different session
    Buffer buf;
  };
  NodePool delivered_nodes;  // nodes of `delivered`, one per message the application holds: declared before it
  using DeliveredMap = std::unordered_map<uint64_t, Held, std::hash<uint64_t>, std::equal_to<uint64_t>,
                                          PoolAllocator<std::pair<const uint64_t, Held>>>;
  DeliveredMap delivered{16, std::hash<uint64_t>{}, std::equal_to<uint64_t>{},
                         DeliveredMap::allocator_type(&delivered_nodes)};  // handle -> buffer the application holds
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
  wire::Bundle bundle_scratch;             // parsed DATA bundle, reused (no allocation per datagram)
  std::vector<Delivery> delivery_scratch;  // on_data's complete messages, reused (no allocation per message)
  std::vector<SessionId> timer_scratch;    // on_timeout's due sessions, reused
  std::vector<SessionId> due_scratch;      // poll_transmit's due sessions, reused

  explicit Impl(const EngineConfig& c)
      : cfg(c),
        flags(mode_flags(c.mode)),
        mrdf_across(flags.mrdf && c.mrdf_across_jobs),
        law(rate_law::for_mode(c.mode)),
        fault_rng(c.faults.seed),
        use_aes(c.prefer_aes_gcm && crypto::aes_available()) {}

  // Every session's payload budget per packet: the datagram minus the header, tag and the data header.
  uint32_t seg_size() const { return packet::segment_room(cfg.max_datagram); }
  double r_max() const { return double(cfg.line_rate_bps) / 8.0; }
  // A job's first window goes right behind its ANNOUNCE, before the receiver confirmed it: one bandwidth-delay
  // product at the line rate (the session's RTT, or initial_rtt before a sample), at most kMaxFirstWindow and the
  // peer's advertised window, at least one datagram.
  static constexpr uint64_t kMaxFirstWindow = 64 * 1024;
  uint64_t first_window(const Session& s) const {
    const double bdp = r_max() * double(s.recovery.srtt()) / 1e9;
    const uint64_t w = std::min<uint64_t>({static_cast<uint64_t>(bdp), kMaxFirstWindow, s.peer_window});
    return std::max<uint64_t>(w, seg_size());
  }
  std::array<uint64_t, size_class::kBounds> size_bounds() const {
    std::array<uint64_t, size_class::kBounds> b{};
    std::copy(std::begin(cfg.size_class_bytes), std::end(cfg.size_class_bytes), b.begin());
    return b;
  }
  RateControlConfig rate_config() const {
    return RateControlConfig{{r_max(), cfg.reaction_speed, cfg.tlr_floor},
                             flags,
                             cfg.min_epoch,
                             cfg.max_datagram,
                             cfg.needy_class0_fraction,
                             cfg.repair_after_segments,
                             cfg.needy_repairing_jobs_only,
                             cfg.small_job_class0_bytes,
                             cfg.size_classes,
                             size_bounds()};
  }

  bool push_event(Event ev, bool essential) {
    if (!essential && events.size() >= cfg.max_pending_events) {
      st.events_dropped++;
      return false;
    }
    events.push_back(std::move(ev));
    return true;
  }

  // Every path into a session goes through here (or through transmit_from / session_timers), so this is where a
  // session's cached deadlines are invalidated.
  Session* find(SessionId id) {
    auto it = sessions.find(id);
    if (it == sessions.end()) return nullptr;
    touch(*it->second);
    return it->second.get();
  }

  // ------------------------------------------------------------------ deadline cache (next_timeout)
  //
  // next_timeout used to evaluate every session's deadlines (loss timer scan, jobs, control frames) on every call,
  // and on_timeout / poll_transmit visited every session: O(sessions) per datagram with one session per job. Now
  // each session's two deadlines (Session::timeout_a / timeout_b) are kept in two ordered sets and recomputed only
  // for sessions touched since the last call. The host pacer (global_next_send) is shared by all sessions, so it is
  // applied on top: min over s of max(b_s, g) = max(min_s b_s, g). Any future pacer shared by several sessions
  // (the per-peer pacer was one) must be applied the same way, or mark every session it gates dirty when it moves.
  mutable std::set<std::pair<TimeNs, SessionId>> due_a, due_b;
  mutable std::vector<SessionId> dirty;  // each live session at most once (Session::timeout_dirty)

  void touch(Session& s) {
    if (s.timeout_dirty) return;
    s.timeout_dirty = true;
    dirty.push_back(s.id);
  }
  void uncache(Session& s) const {
    if (!s.timeout_cached) return;
    due_a.erase({s.timeout_a, s.id});
    due_b.erase({s.timeout_b, s.id});
    s.timeout_cached = false;
  }
  // Call before a session is erased.
  void forget_timeouts(Session& s) {
    uncache(s);
    if (s.timeout_dirty) dirty.erase(std::find(dirty.begin(), dirty.end(), s.id));
    s.timeout_dirty = false;
  }
  void refresh_timeouts() const {
    for (SessionId id : dirty) {
      auto it = sessions.find(id);
      if (it == sessions.end()) continue;
      Session& s = *it->second;
      uncache(s);
      session_timeout_parts(s, &s.timeout_a, &s.timeout_b);
      if (mrdf_across) data_order(s, &s.mrdf_key, &s.mrdf_starve_at);
      due_a.emplace(s.timeout_a, s.id);
      due_b.emplace(s.timeout_b, s.id);
      s.timeout_cached = true;
      s.timeout_dirty = false;
    }
    dirty.clear();
  }

  // ------------------------------------------------------------------ job lifecycle

  void finish_send_job(Session& s, JobId id, Status status, TimeNs now, const wire::Done* done = nullptr) {
    auto it = s.send_jobs.find(id);
    if (it == s.send_jobs.end()) return;
    SendJob& j = *it->second;
    j.release_buffers();
    Event ev;
    ev.type = EventType::kJobDone;
    ev.session = s.id;
    ev.job = id;
    ev.status = status;
    auto report = std::make_shared<JobReport>();
    report->session = s.id;
    report->status = status;
    j.fill_report(*report, now);
    if (done) report->dones_sent = done->attempt;
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
    // This job's own unsent frames are moot now. Only the sending side's: the peer may run a sending job of the
    // same id towards us (ids are chosen per sending side), and the DONE we owe it must still go out.
    s.control.erase(std::remove_if(s.control.begin(), s.control.end(),
                                   [&](const ControlFrame& f) {
                                     const bool ours = f.type == PacketType::kAnnounce ||
                                                       f.type == PacketType::kUpdate || f.type == PacketType::kAbandon;
                                     return f.job == id && ours && !f.in_flight;
                                   }),
                    s.control.end());
    s.send_jobs.erase(it);
    remember_finished(s.finished_send, id);  // ids are not reused while the peer may still know them
  }

  static void remember_finished(std::deque<JobId>& list, JobId id) {
    list.push_back(id);
    while (list.size() > 1024) list.pop_front();
  }

  void finish_recv_job(Session& s, JobId id, Status status, TimeNs now, bool tell_sender) {
    auto it = s.recv_jobs.find(id);
    if (it == s.recv_jobs.end()) return;
    RecvJob& j = *it->second;
    j.release_buffers(s.recv);
    if (!j.announced()) {  // known only from early data: the application never heard of it
      s.recv_jobs.erase(it);
      remember_finished(s.finished_recv, id);
      return;
    }
    Event ev;
    ev.type = EventType::kJobDone;
    ev.session = s.id;
    ev.job = id;
    ev.status = status;
    auto report = std::make_shared<JobReport>();
    report->session = s.id;
    report->status = status;
    j.fill_report(*report, now, cfg.max_report_ranges);
    ev.report = std::move(report);
    push_event(std::move(ev), true);
    if (tell_sender) {
      // The per-group counts ride along when they fit one datagram, so the sender's report can use them.
      std::vector<uint32_t> group_delivered;
      if (j.ready() && j.groups.size() <= packet::done_groups_room(cfg.max_datagram)) {
        group_delivered.reserve(j.groups.size());
        for (const auto& g : j.groups) group_delivered.push_back(g.delivered);
      }
      queue_control(s, PacketType::kDone, id, packet::done_body(id, status, j.delivered, j.lost, group_delivered));
      s.ack_now = true;  // acknowledge the last data before the DONE goes out
    }
    s.recv_jobs.erase(it);
    remember_finished(s.finished_recv, id);
  }

  void remember_path(const Session& s, TimeNs now) {
    const TimeNs peak = s.recovery.recent_peak_rtt();
    if (peak == 0) return;
    if (path_memory.size() >= kMaxPathMemory && !path_memory.count(s.peer)) path_memory.erase(path_memory.begin());
    path_memory[s.peer] = PathMemory{peak, now};
  }

  // The largest recent peak RTT of other sessions to s's peer, live or ended.
  TimeNs path_peak(const Session& s, TimeNs now) const {
    TimeNs peak = 0;
    auto it = path_memory.find(s.peer);
    if (it != path_memory.end() && now - it->second.at < 2 * Recovery::kPeakWindow) peak = it->second.peak;
    for (const auto& [id, o] : sessions)
      if (o.get() != &s && o->peer == s.peer) peak = std::max(peak, o->recovery.recent_peak_rtt());
    return peak;
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
    remember_path(s, now);
    forget_timeouts(s);
    sessions.erase(s.id);
    st.sessions = sessions.size();
  }

  // Seals a CLOSE carrying `status` with the session's key; call before the session is erased.
  void queue_farewell(Session& s, Status status) {
    std::vector<uint8_t> bytes =
        packet::close_packet(status, s.key, s.initiator, s.id, s.recovery.next_pn(), flags_of(s, PacketType::kClose));
    s.recovery.skip_pn();
    if (farewells.size() >= kMaxFarewells) {
      farewells.pop_front();
      st.farewells_dropped++;
    }
    farewells.push_back(Farewell{s.peer, std::move(bytes)});
  }

  void queue_control(Session& s, PacketType type, JobId job, std::vector<uint8_t> body) {
    s.control.push_back(ControlFrame{s.next_ctrl_id++, type, job, std::move(body), false});
  }

  // ------------------------------------------------------------------ packet fates (recovery -> jobs)

  // What an acknowledged or lost packet means for the session's jobs and control frames.
  struct Fate final : PacketFate {
    Impl& I;
    Session& s;
    Fate(Impl& impl, Session& sess) : I(impl), s(sess) {}

    void on_acked(const SentPacket& p) override {
      if (p.kind == SentPacket::Kind::kData) {
        if (SendJob* j = job(p.job)) {
          j->packets_acked++;
          j->rate.on_resolved(true, p.size);
          for_each_segment(p, [&](MessageId m, uint32_t seg) { j->on_segment_acked(m, seg); });
          j->rate.on_remaining(I.clock, j->remaining_bytes());
        }
      } else if (p.kind == SentPacket::Kind::kControl) {
        frame_acked(p.ctrl);
      }
    }

    void on_lost(const SentPacket& p) override {
      if (p.kind == SentPacket::Kind::kData) {
        if (SendJob* j = job(p.job)) {
          j->packets_lost++;
          j->rate.on_resolved(false, p.size);
          for_each_segment(p, [&](MessageId m, uint32_t seg) { j->on_segment_lost(m, seg); });
        }
      } else if (p.kind == SentPacket::Kind::kControl) {
        auto it = frame(p.ctrl);
        if (it == s.control.end()) return;
        // Send it again: at once after a first loss, then backing off so a dead or congested path is not flooded.
        it->in_flight = false;
        it->losses = std::min<uint32_t>(it->losses + 1, 16);
        const TimeNs backoff =
            it->losses < 2 ? 0 : std::min<TimeNs>(s.recovery.pto() << std::min<uint32_t>(it->losses - 2, 10), kSecond);
        it->not_before = I.clock + backoff;
      }
    }

    // Declared lost, then acknowledged: not a loss after all. Undo what can still be undone.
    void on_late_ack(const SentPacket& p) override {
      if (p.kind == SentPacket::Kind::kData) {
        if (SendJob* j = job(p.job)) {
          if (j->packets_lost > 0) j->packets_lost--;
          j->packets_acked++;
          j->rate.on_late_ack(p.size);
          for_each_segment(p, [&](MessageId m, uint32_t seg) { j->on_segment_late_ack(m, seg); });
        }
      } else if (p.kind == SentPacket::Kind::kControl) {
        frame_acked(p.ctrl);  // any copy of a frame acknowledges it
      }
    }

    // A DATA packet's segments: its one segment, or each whole message of a bundle (its segment 0). A bundle's
    // fate is every message's fate: its loss loses all of them, each then retransmitted or given up on its own.
    template <typename F>
    static void for_each_segment(const SentPacket& p, F&& f) {
      if (p.bundled.empty()) {
        f(p.msg, p.seg);
        return;
      }
      for (MessageId m : p.bundled) f(m, 0);
    }

    void frame_acked(uint64_t id) {
      auto it = frame(id);
      if (it == s.control.end()) return;  // an earlier copy was acknowledged already
      const PacketType type = it->type;
      const JobId job_id = it->job;
      s.control.erase(it);
      if (type != PacketType::kAnnounce) return;
      SendJob* j = job(job_id);
      if (j && --j->announce_unacked == 0) j->set_running(I.clock);
    }

    SendJob* job(JobId id) {
      auto it = s.send_jobs.find(id);
      return it == s.send_jobs.end() ? nullptr : it->second.get();
    }
    std::deque<ControlFrame>::iterator frame(uint64_t id) {
      return std::find_if(s.control.begin(), s.control.end(), [&](const ControlFrame& f) { return f.id == id; });
    }
  };

  // A probe timeout: one ack-eliciting packet now - a copy of the oldest control frame in flight, else a PING.
  void send_probe(Session& s, TimeNs now) {
    for (auto& f : s.control) {
      if (!control_ready(s, f)) continue;
      if (f.in_flight) {
        f.in_flight = false;
        f.not_before = now;
        f.probe = true;
        return;
      }
      if (f.not_before <= now) return;  // goes out now anyway
    }
    s.ping_now = true;
  }

  // ------------------------------------------------------------------ sender: epochs

  void end_epoch(Session& s, SendJob& j, TimeNs now) {
    EpochSample sample = j.rate.end_epoch(now, j.progress(), j.packets_per_message(), s.recovery.srtt(),
                                          j.messages_submitted() ? j.remaining_bytes() : RateController::kUnknownBytes);
    if (!j.pending_abandons().empty() && j.rate.epochs() % 16 == 0) flush_abandons(s, j);  // bounded delay
    if (trace) {
      sample.session = s.id;
      sample.job = j.id;
      Event ev;
      ev.type = EventType::kEpoch;
      ev.session = s.id;
      ev.job = j.id;
      ev.epoch = sample;
      push_event(std::move(ev), false);
    }
  }

  // ------------------------------------------------------------------ packet building

  // The bytes come from packet_builder; what sending them means for the session (packet log, pacing, the job's
  // counters) is decided here.

  uint8_t flags_of(const Session& s, PacketType type) const {
    const bool header_only = !cfg.payload_auth && type == PacketType::kData;
    return packet::header_flags(use_aes, s.peer_aes_capable, header_only, cfg.coalesce_messages);
  }

  size_t seal(Session& s, uint8_t* buf, PacketType type, size_t body_len) {
    return packet::seal(buf, type, s.key, s.initiator, s.id, s.recovery.next_pn(), flags_of(s, type), body_len);
  }

  void record_sent(Session& s, SentPacket& p, TimeNs now) {
    s.recovery.on_sent(std::move(p), now);
    s.last_tx = now;
  }

  size_t build_ack(Session& s, uint8_t* buf, TimeNs now) {
    const auto ranges = s.received.ranges(packet::max_ack_ranges(cfg.max_datagram));
    const uint64_t window = s.recv.free();
    const size_t body_len =
        packet::write_ack(buf + wire::kHeaderBytes, cfg.max_datagram - wire::kOverheadBytes, s.received.largest(),
                          packet::ack_delay(now, s.ack_deadline, cfg.ack_delay), window, ranges);
    s.ack_now = false;
    s.ack_deadline = kNever;
    s.unacked_eliciting = 0;
    s.last_advertised_window = window;
    const size_t len = seal(s, buf, PacketType::kAck, body_len);
    SentPacket p;
    p.kind = SentPacket::Kind::kAck;
    p.state = SentPacket::State::kAcked;
    record_sent(s, p, now);
    return len;
  }

  size_t abandons_per_frame() const { return packet::abandons_per_frame(cfg.max_datagram); }

  // Turns pending abandon notices into control frames.
  void flush_abandons(Session& s, SendJob& j) {
    const size_t per = abandons_per_frame();
    const std::vector<MessageId> ids = j.take_abandons();
    for (size_t i = 0; i < ids.size();) {
      const size_t n = std::min(per, ids.size() - i);
      queue_control(s, PacketType::kAbandon, j.id, packet::abandon_body(j.id, ids.data() + i, n));
      i += n;
    }
  }

  // Abandon notices are batched: sent when a frame is full, when the job has nothing else to send, or at the end
  // of every 16th epoch (end_epoch flushes).
  bool abandons_due(const SendJob& j) const {
    const size_t pending = j.pending_abandons().size();
    return pending > 0 && (pending >= abandons_per_frame() || !j.has_ready());
  }

  // A job's UPDATE and ABANDON frames wait until its announce is acknowledged, so they can never overtake it.
  bool control_ready(const Session& s, const ControlFrame& f) const {
    if (f.type != PacketType::kUpdate && f.type != PacketType::kAbandon) return true;
    auto it = s.send_jobs.find(f.job);
    return it == s.send_jobs.end() || it->second->running;
  }

  bool data_sendable(const Session& s, const SendJob& j) const {
    return j.may_send_data() && j.has_ready() &&
           s.recovery.inflight_bytes() + cfg.max_datagram <= std::max<uint64_t>(s.peer_window, cfg.max_datagram) &&
           s.recovery.span() < ReceivedWindow::kBits / 2;
  }

  TimeNs data_time(const SendJob& j) const { return std::max(j.rate.next_send(), global_next_send); }

  // The class of a DATA packet (scheduler::data_dscp; class 0 for a needy job, RateController::end_epoch) and of
  // everything else (scheduler::control_dscp).
  uint8_t data_dscp(const SendJob& j, bool exact, bool extra = false) const {
    return scheduler::data_dscp(cfg, flags.slack_priority, j.rate.priority_class(), exact, extra);
  }
  uint8_t control_dscp() const { return scheduler::control_dscp(cfg); }

  // Pacing: the job at its rate R, the host at the line rate (the datagram and its wire overhead); a short burst
  // allowance lets drivers batch.
  void paced(Session& s, SendJob& j, TimeNs now, size_t total, uint8_t dscp) {
    j.rate.on_sent(now, total);
    const TimeNs burst = RateController::kBurstAllowance;
    global_next_send = std::max(global_next_send, now > burst ? now - burst : 0) +
                       TimeNs(double(total + cfg.wire_overhead_bytes) * 1e9 / r_max());
  }

  // Several whole small messages of one job, in send order, of one class (exact or not: one DSCP), in one
  // datagram. Each keeps its own fate (for_each_segment): acknowledged, given up or retransmitted per message.
  size_t build_bundle(Session& s, SendJob& j, bool exact, bool extra, uint8_t* buf, TimeNs now, uint8_t* dscp) {
    packet::BundleWriter w(buf + wire::kHeaderBytes, cfg.max_datagram, j.id);
    SentPacket p;
    p.kind = SentPacket::Kind::kData;
    p.job = j.id;
    p.bundled = s.recovery.take_bundle_list();
    bool next_exact = exact, next_extra = extra;
    SegmentToSend seg;
    while (w.count() < UINT16_MAX && j.may_send_data()) {
      if (!w.has_room()) break;
      if (!j.next_is_whole_message(w.fits(), &next_exact, &next_extra) || next_exact != exact || next_extra != extra)
        break;
      if (!j.take_next_segment(&seg)) break;
      w.add(seg.msg, seg.payload, static_cast<uint16_t>(seg.len));
      p.bundled.push_back(seg.msg);
      p.bytes += seg.len;
      p.retransmission = p.retransmission || seg.retransmission;
    }
    if (w.count() == 0) return 0;
    if (p.retransmission) j.retransmitted++;  // packets, as for DATA
    const size_t total = seal(s, buf, PacketType::kDataBundle, w.finish());
    *dscp = data_dscp(j, exact, extra);
    p.dscp = *dscp;
    p.size = static_cast<uint32_t>(total);
    j.last_data_sent = now;
    record_sent(s, p, now);
    j.packets_sent++;
    j.bytes_sent += total;
    paced(s, j, now, total, *dscp);
    return total;
  }

  size_t build_data(Session& s, SendJob& j, uint8_t* buf, TimeNs now, uint8_t* dscp) {
    bool exact = false, extra = false;
    if (cfg.coalesce_messages && s.peer_bundles &&
        j.next_is_whole_message(packet::max_bundled_message(cfg.max_datagram), &exact, &extra))
      return build_bundle(s, j, exact, extra, buf, now, dscp);
    SegmentToSend seg;
    if (!j.take_next_segment(&seg)) return 0;
    const size_t body_len =
        packet::write_data(buf + wire::kHeaderBytes, cfg.max_datagram - wire::kOverheadBytes, j.id, seg);
    const size_t total = seal(s, buf, PacketType::kData, body_len);
    *dscp = data_dscp(j, seg.exact, seg.extra);
    j.last_data_sent = now;
    SentPacket p;
    p.kind = SentPacket::Kind::kData;
    p.dscp = *dscp;
    p.retransmission = seg.retransmission;
    p.bytes = seg.len;
    p.size = static_cast<uint32_t>(total);
    p.job = j.id;
    p.msg = seg.msg;
    p.seg = seg.seg;
    record_sent(s, p, now);
    j.packets_sent++;
    j.bytes_sent += total;
    if (seg.retransmission) j.retransmitted++;
    paced(s, j, now, total, *dscp);
    return total;
  }

  size_t build_control(Session& s, ControlFrame& f, uint8_t* buf, TimeNs now) {
    f.sends++;
    if (f.type == PacketType::kDone) packet::set_done_attempt(&f.body, f.sends);  // which transmission it is
    if (f.type == PacketType::kAnnounce || f.type == PacketType::kUpdate) {
      auto it = s.send_jobs.find(f.job);
      if (it != s.send_jobs.end()) {
        (f.type == PacketType::kAnnounce ? it->second->announces_sent : it->second->updates_sent)++;
        // A caller may poll with a clock read before its start_job (a driver thread's loop time): not before it.
        if (f.type == PacketType::kAnnounce && it->second->announce_sent_at == kNever)
          it->second->announce_sent_at = std::max(now, it->second->started);
        if (f.probe && f.type == PacketType::kAnnounce) it->second->announce_probes++;
      }
    }
    f.probe = false;
    std::memcpy(buf + wire::kHeaderBytes, f.body.data(), f.body.size());
    const size_t len = seal(s, buf, f.type, f.body.size());
    f.in_flight = true;
    SentPacket p;
    p.kind = SentPacket::Kind::kControl;
    p.dscp = control_dscp();
    p.job = f.job;
    p.ctrl = f.id;
    record_sent(s, p, now);
    return len;
  }

  size_t build_ping(Session& s, uint8_t* buf, TimeNs now) {
    const size_t len = seal(s, buf, PacketType::kPing, 0);
    s.ping_now = false;
    s.last_ping = now;
    SentPacket p;
    p.dscp = control_dscp();
    record_sent(s, p, now);
    return len;
  }

  // ------------------------------------------------------------------ MRDF across sessions
  //
  // The host pacer (global_next_send) is shared by every session; who gets its DATA slot is the scheduler's
  // decision (core/scheduler.hpp): round-robin over sessions, or in the modes with MRDF the job with the least
  // remaining data among the sessions with data due, whatever its session, with a starvation guard. ACKs, control
  // frames, probes and PINGs of every due session go before any DATA.

  // The session whose data goes next (MRDF across sessions): among those with data due (due_b up to now; the
  // caches are fresh, refresh_timeouts ran), scheduler::DataSlotChoice over their cached ranks. O(sessions with
  // data due), as the round-robin pass.
  Session* pick_data_session(TimeNs now) {
    scheduler::DataSlotChoice choice(now);
    for (auto d = due_b.begin(); d != due_b.end() && d->first <= now; ++d) {
      auto it = sessions.find(d->second);
      if (it == sessions.end()) continue;
      const Session& s = *it->second;
      choice.offer(s.id, scheduler::SessionRank{s.mrdf_key, s.mrdf_starve_at});
    }
    if (!choice.chosen()) return nullptr;
    st.mrdf_slots++;
    if (choice.candidates() > 1) st.mrdf_contended++;
    if (choice.starving()) st.mrdf_starved++;
    return sessions.find(choice.session())->second.get();
  }

  // A session's rank across sessions (Session::mrdf_key / mrdf_starve_at), over its jobs that may send data.
  void data_order(const Session& s, uint64_t* key, TimeNs* starve) const {
    scheduler::SessionRank r;
    for (const auto& [id, j] : s.send_jobs)
      if (data_sendable(s, *j)) r.add(scheduler::rank_of(*j, s.recovery.srtt()));
    *key = r.key;
    *starve = r.starve_at;
  }

  // One datagram from session s, or 0. `what`: everything (round-robin modes), or only the non-DATA part (ACK,
  // control frames, PING) or only DATA (MRDF across sessions serves the two in separate passes).
  enum class Part { kAll, kControl, kData };
  size_t transmit_from(Session& s, TimeNs now, uint8_t* buf, uint8_t* dscp, Part what = Part::kAll) {
    *dscp = control_dscp();
    if (what != Part::kData) {
      if (size_t len = transmit_control(s, now, buf)) return len;
      if (what == Part::kControl) return 0;
    }
    SendJob* best = nullptr;
    scheduler::JobRank best_rank;
    const auto order = scheduler::job_order(mrdf_across, mrdf_across && s.mrdf_starve_at <= now);
    for (auto& [id, j] : s.send_jobs) {
      if (!data_sendable(s, *j) || data_time(*j) > now) continue;
      const scheduler::JobRank rank = scheduler::rank_of(*j, s.recovery.srtt());
      if (!best || scheduler::goes_before(order, rank, best_rank)) {
        best = j.get();
        best_rank = rank;
      }
    }
    if (best) return build_data(s, *best, buf, now, dscp);
    return 0;
  }

  size_t transmit_control(Session& s, TimeNs now, uint8_t* buf) {
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
    return 0;
  }

  // ------------------------------------------------------------------ receiving

  void on_ack(Session& s, const wire::Ack& a, TimeNs now) {
    s.peer_window = a.window;
    for (auto& [id, j] : s.send_jobs)
      if (!j->running) j->acks_while_starting++;
    Fate fate(*this, s);
    s.recovery.on_ack(a, now, fate);
  }

  size_t max_control_frames() const { return size_t{cfg.max_jobs_per_session} * 4 + 64; }

  // Returns whether the packet is accepted (acknowledged). A job the receiver cannot take is refused with a DONE
  // carrying the reason; while the event or control queue is full, announces are not acknowledged (the sender
  // repeats them later), which keeps both queues bounded however many jobs a peer announces.
  bool on_announce(Session& s, const wire::Announce& a, TimeNs now) {
    if (std::find(s.finished_recv.begin(), s.finished_recv.end(), a.job) != s.finished_recv.end()) return true;
    auto it = s.recv_jobs.find(a.job);
    if (it == s.recv_jobs.end() || !it->second->announced()) {
      const bool early = it != s.recv_jobs.end();  // early data came first
      if (events.size() + 2 > cfg.max_pending_events || s.control.size() >= max_control_frames()) {
        st.dropped_no_buffer++;
        defer_announce(it == s.recv_jobs.end() ? nullptr : it->second.get());
        return false;
      }
      if (a.n_groups > cfg.max_groups_per_job || a.n_messages > cfg.max_messages_per_job || a.n_messages == 0 ||
          (!early && s.recv_jobs.size() >= cfg.max_jobs_per_session)) {
        st.dropped_malformed++;
        refuse_job(s, a.job, Status::kLimitExceeded);
        return true;
      }
      // The job's bookkeeping (group table, delivered/lost bitmaps) is charged to the receive buffer like data,
      // so a peer cannot make us hold more than the buffer in tables either. A table larger than the whole buffer
      // is refused; one that does not fit right now waits (no ack: the sender repeats the ANNOUNCE) - unless the
      // job's own early data fills the buffer: that data only leaves once the table is known, so the table may
      // then go beyond the buffer, by at most one more buffer in total.
      const uint64_t table = RecvJob::table_bytes(a.n_messages, a.n_groups);
      if (table > cfg.recv_buffer_bytes) {
        st.dropped_no_buffer++;
        refuse_job(s, a.job, Status::kLimitExceeded);
        return true;
      }
      const uint64_t before = early ? it->second->charged_table : 0;
      const uint64_t limit = early ? 2 * cfg.recv_buffer_bytes : cfg.recv_buffer_bytes;
      if (s.recv.used - before + table > limit) {
        st.dropped_no_buffer++;
        defer_announce(early ? it->second.get() : nullptr);
        return false;
      }
      if (!early) {
        it = s.recv_jobs.emplace(a.job, std::make_unique<RecvJob>(a.job, now)).first;
        mark_active(s, now);
        st.jobs++;
      }
      RecvJob& j = *it->second;
      j.set_size(a.n_messages, a.n_groups, (a.flags & wire::kAnnounceFlagMrdf) != 0);
      s.recv.used += table - before;
      j.charged_table = table;
    }
    RecvJob& j = *it->second;
    j.announces_received++;
    j.announces_acked++;  // every way on from here accepts the packet: it is acknowledged at once
    if (j.ready()) j.announces_duplicate++;
    std::vector<Delivery> out;
    switch (j.add_groups(a, now, s.recv, &out, &st.dropped_malformed)) {
      case RecvJob::TableResult::kMismatch: st.dropped_malformed++; return true;
      case RecvJob::TableResult::kIncomplete: return true;
      case RecvJob::TableResult::kBadSizes:  // inconsistent announce: end the job with a protocol error
        st.dropped_malformed++;
        finish_recv_job(s, j.id, Status::kProtocolError, now, true);
        return true;
      case RecvJob::TableResult::kReady: break;
    }
    Event ev;
    ev.type = EventType::kJobStarted;
    ev.session = s.id;
    ev.job = j.id;
    push_event(std::move(ev), true);
    deliver(s, j, out);  // early data that waited for the table
    check_recv_complete(s, j, now);
    return true;
  }

  // An ANNOUNCE the receiver cannot take now: not acknowledged, so the sender repeats it.
  void defer_announce(RecvJob* early_job) {
    st.announces_deferred++;
    if (early_job) early_job->announces_received++;
  }

  void refuse_job(Session& s, JobId id, Status why) {
    if (auto it = s.recv_jobs.find(id); it != s.recv_jobs.end()) {  // early data of a job that cannot be taken
      it->second->release_buffers(s.recv);
      s.recv_jobs.erase(it);
    }
    queue_control(s, PacketType::kDone, id, packet::done_body(id, why, 0, 0, {}));
    remember_finished(s.finished_recv, id);
  }

  void check_recv_complete(Session& s, RecvJob& j, TimeNs now) {
    if (j.complete()) finish_recv_job(s, j.id, Status::kOk, now, true);
  }

  // Hands complete messages to the application: one kMessage event each, the buffer held until release().
  void deliver(Session& s, const RecvJob& j, std::vector<Delivery>& out) {
    for (Delivery& d : out) {
      const uint64_t handle = next_handle++;
      Event ev;
      ev.type = EventType::kMessage;
      ev.session = s.id;
      ev.job = j.id;
      ev.message = d.msg;
      ev.group_id = d.group_id;
      ev.len = d.buf.size();
      ev.handle = handle;
      s.recv.app_held += RecvJob::held_charge(d.buf.size());  // already in s.recv.used
      auto& slot = delivered[handle];
      slot.session = s.id;
      slot.generation = s.generation;
      slot.buf = std::move(d.buf);
      ev.data = slot.buf.data();
      push_event(std::move(ev), true);
    }
    out.clear();
  }

  // Returns true when the packet was accepted (and so may be acknowledged).
  bool on_data(Session& s, const wire::Data& d, TimeNs now) {
    auto it = s.recv_jobs.find(d.job);
    if (it == s.recv_jobs.end()) {
      if (std::find(s.finished_recv.begin(), s.finished_recv.end(), d.job) != s.finished_recv.end()) return true;
      // Early data: the job's ANNOUNCE has not arrived yet. Hold the data within the receive buffer.
      if (s.recv_jobs.size() >= cfg.max_jobs_per_session) {
        st.dropped_unknown_job++;
        return false;
      }
      if (s.recv.used + RecvJob::kEarlyJobBytes > cfg.recv_buffer_bytes) {
        st.dropped_no_buffer++;
        return false;
      }
      auto j = std::make_unique<RecvJob>(d.job, now);
      j->charged_table = RecvJob::kEarlyJobBytes;
      s.recv.used += RecvJob::kEarlyJobBytes;
      mark_active(s, now);
      it = s.recv_jobs.emplace(d.job, std::move(j)).first;
      st.jobs++;
    }
    RecvJob& j = *it->second;
    std::vector<Delivery>& out = delivery_scratch;  // emptied by deliver() below
    out.clear();
    bool completed = false;
    const auto r =
        j.on_data(d, s.recv, cfg.max_message_bytes, events.size() >= cfg.max_pending_events, now, &out, &completed);
    if (r == RecvJob::DataResult::kMalformed) {
      st.dropped_malformed++;
      return false;
    }
    if (r == RecvJob::DataResult::kNoBuffer) {
      st.dropped_no_buffer++;
      return false;
    }
    if (!j.ready()) j.early_data_packets++;
    deliver(s, j, out);
    if (completed) check_recv_complete(s, j, now);
    return true;
  }

  // Each message of a bundle goes through on_data as a one-segment message. The bundle is acknowledged only when
  // every message was taken; otherwise the sender learns of its loss and decides per message (messages already
  // taken are duplicates the receiver ignores, or given-up ones it has: see section 5).
  bool on_bundle(Session& s, const wire::Bundle& b, TimeNs now) {
    bool all = true;
    for (const wire::BundleEntry& e : b.entries) {
      wire::Data d{b.job, e.msg, e.len, 0, e.len, e.payload, e.len};
      if (!on_data(s, d, now)) all = false;
    }
    return all;
  }

  // Frames for a job whose announce is still incomplete are not acknowledged, so the sender repeats them.
  bool job_pending_or_finished(const Session& s, JobId job, bool* accepted) const {
    auto it = s.recv_jobs.find(job);
    if (it != s.recv_jobs.end() && it->second->ready()) return false;
    *accepted = std::find(s.finished_recv.begin(), s.finished_recv.end(), job) != s.finished_recv.end();
    return true;
  }

  bool on_abandon(Session& s, const wire::Abandon& a, TimeNs now) {
    bool accepted;
    if (job_pending_or_finished(s, a.job, &accepted)) return accepted;
    RecvJob& j = *s.recv_jobs.find(a.job)->second;
    std::vector<std::pair<MessageId, uint64_t>> lost;
    j.on_abandon(a.msgs, s.recv, &lost, &st.dropped_malformed);
    for (const auto& [m, gid] : lost) {
      Event ev;
      ev.type = EventType::kMessageLost;
      ev.session = s.id;
      ev.job = j.id;
      ev.message = m;
      ev.group_id = gid;
      push_event(std::move(ev), false);
    }
    check_recv_complete(s, j, now);
    return true;
  }

  bool on_update(Session& s, const wire::Update& u, TimeNs now) {
    bool accepted;
    if (job_pending_or_finished(s, u.job, &accepted)) return accepted;
    RecvJob& j = *s.recv_jobs.find(u.job)->second;
    std::vector<Delivery> out;
    j.on_update(u.entries, &out, &st.dropped_malformed);
    deliver(s, j, out);
    check_recv_complete(s, j, now);
    return true;
  }

  void on_done(Session& s, const wire::Done& d, TimeNs now) {
    const Status status = d.status == 0 ? Status::kOk
                          : d.status < 0 && d.status >= static_cast<int32_t>(Status::kInternal)
                              ? static_cast<Status>(d.status)
                              : Status::kProtocolError;
    finish_send_job(s, d.job, status, now, &d);
  }

  void on_cancel(Session& s, JobId job, TimeNs now) {
    if (s.recv_jobs.count(job)) {
      finish_recv_job(s, job, Status::kClosed, now, false);
    } else if (std::find(s.finished_recv.begin(), s.finished_recv.end(), job) == s.finished_recv.end()) {
      // The CANCEL overtook the job's ANNOUNCE (lost or reordered; the sender may still repeat it): remember the
      // id so a late ANNOUNCE cannot start a job nobody will ever send or cancel again.
      remember_finished(s.finished_recv, job);
    }
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
    if (!crypto::verify(s.key, h.from_initiator, h.packet_number, data, covered,
                        data + wire::kHeaderBytes + body_len)) {
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
    s.peer_bundles = (h.flags & wire::kFlagBundles) != 0;
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
      case PacketType::kDataBundle: {
        err = wire::parse_bundle(body, body_len, &bundle_scratch);
        if (err == wire::ParseError::kOk) accepted = on_bundle(s, bundle_scratch, now);
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
        if (err == wire::ParseError::kOk) on_done(s, d, now);
        break;
      }
      case PacketType::kPing: err = body_len == 0 ? wire::ParseError::kOk : wire::ParseError::kBadBody; break;
      case PacketType::kClose: {
        int32_t code;
        err = wire::parse_close(body, body_len, &code);
        if (err == wire::ParseError::kOk) {
          // The peer says why (kClosed for an ordinary close); anything unknown reads as a protocol error.
          const Status why =
              code == static_cast<int32_t>(Status::kClosed) || code == static_cast<int32_t>(Status::kProtocolError)
                  ? static_cast<Status>(code)
              : code == 0 ? Status::kClosed
                          : Status::kProtocolError;
          fail_session(s, why, now);
          return;  // s is gone
        }
        break;
      }
      case PacketType::kCancel: {
        uint32_t job;
        err = wire::parse_cancel(body, body_len, &job);
        if (err == wire::ParseError::kOk) on_cancel(s, job, now);
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
    const bool is_data = h.type == PacketType::kData || h.type == PacketType::kDataBundle;
    if (s.unacked_eliciting >= cfg.ack_every || !in_order || !is_data) {
      s.ack_now = true;
    } else if (s.ack_deadline == kNever) {
      s.ack_deadline = now + cfg.ack_delay;
    }
  }

  // ------------------------------------------------------------------ timers

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

  // session_timeout without the host pacer: *a = every deadline but data pacing, *b = the earliest own pacing time
  // (RateController::next_send) of the jobs that may send data. session_timeout(s) = min(a, max(b, global_next_send)).
  void session_timeout_parts(const Session& s, TimeNs* a_out, TimeNs* b_out) const {
    TimeNs a =
        std::min({s.recovery.loss_timer(), s.recovery.probe_deadline(), liveness_deadline(s), keepalive_deadline(s)});
    TimeNs b = kNever;
    if (s.ack_now || s.ping_now) a = 0;
    a = std::min(a, s.ack_deadline);
    for (const auto& f : s.control)
      if (!f.in_flight && control_ready(s, f)) a = std::min(a, f.not_before);
    for (const auto& [id, j] : s.send_jobs) {
      if (abandons_due(*j)) a = 0;
      if (j->running) a = std::min(a, j->rate.epoch_deadline(s.recovery.srtt()));
      if (data_sendable(s, *j)) b = std::min(b, j->rate.next_send());
    }
    *a_out = a;
    *b_out = b;
  }

  TimeNs session_timeout(const Session& s) const {
    TimeNs t =
        std::min({s.recovery.loss_timer(), s.recovery.probe_deadline(), liveness_deadline(s), keepalive_deadline(s)});
    if (s.ack_now || s.ping_now) return 0;
    t = std::min(t, s.ack_deadline);
    for (const auto& f : s.control)
      if (!f.in_flight && control_ready(s, f)) t = std::min(t, f.not_before);
    for (const auto& [id, j] : s.send_jobs) {
      if (abandons_due(*j)) return 0;
      if (j->running) t = std::min(t, j->rate.epoch_deadline(s.recovery.srtt()));
      if (data_sendable(s, *j)) t = std::min(t, data_time(*j));
    }
    return t;
  }

  void session_timers(Session& s, TimeNs now) {
    if (liveness_deadline(s) <= now) {
      fail_session(s, s.has_active_jobs() ? Status::kPeerDead : Status::kIdleTimeout, now);
      return;
    }
    Fate fate(*this, s);
    if (s.recovery.loss_timer() <= now) s.recovery.detect_losses(now, fate);
    if (s.recovery.probe_deadline() <= now) {
      s.recovery.on_probe_timeout(now, fate);
      send_probe(s, now);
    }
    if (keepalive_deadline(s) <= now) s.ping_now = true;
    for (auto& [id, j] : s.send_jobs)
      if (j->running && j->rate.epoch_deadline(s.recovery.srtt()) <= now) end_epoch(s, *j, now);
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
  auto s = std::make_unique<Session>(I.cfg.initial_rtt, I.cfg.ack_delay);
  s->id = id;
  crypto::prepare(&s->key, key);
  s->generation = I.next_generation++;
  s->peer = peer;
  s->initiator = initiator;
  // Bundles go from the first packet on (a peer of this wire version parses them whatever its own setting); the
  // peer's authenticated packets then say whether it wants them (wire::kFlagBundles).
  s->peer_bundles = I.cfg.coalesce_messages;
  s->created = s->last_rx = s->last_tx = now;
  s->peer_window = I.cfg.recv_buffer_bytes;
  s->recv.capacity = I.cfg.recv_buffer_bytes;
  I.touch(*s);
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
  I.remember_path(*s, now);
  I.forget_timeouts(*s);
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
  if (const TimeNs peak = I.path_peak(s, now)) s.recovery.seed_peak_rtt(peak, now);
  auto j = std::make_unique<SendJob>(spec, I.flags.mrdf, I.seg_size(), I.law, I.rate_config(), s.send_buffered);
  j->first_window = I.first_window(s);
  const auto prog = j->progress();
  j->rate.start(now, slack::target_loss_rate(prog), slack::target_loss_rate(prog, true), spec.deadline);
  j->started = now;
  // Announce: group table in chunks; data waits until every chunk is acknowledged.
  const size_t per = packet::announce_entries_per_frame(I.cfg.max_datagram);
  std::vector<wire::AnnounceEntry> table;
  table.reserve(j->groups.size());
  for (const auto& g : j->groups) table.push_back({g.spec.group_id, g.spec.size, g.target});
  for (size_t first = 0; first < table.size(); first += per) {
    const size_t n = std::min(per, table.size() - first);
    I.queue_control(s, PacketType::kAnnounce, j->id,
                    packet::announce_body(j->id, j->n, static_cast<uint32_t>(table.size()),
                                          static_cast<uint32_t>(first), spec.mrdf, table.data() + first, n));
    j->announce_unacked++;
  }
  I.mark_active(s, now);
  s.send_jobs.emplace(spec.job_id, std::move(j));
  I.st.jobs++;
  return Status::kOk;
}

Status Engine::submit(SessionId sid, JobId jid, uint32_t group_index, uint32_t index, const uint8_t* data, size_t len,
                      TimeNs now) {
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
  const Status st = j.submit(group_index, index, data, len, I.cfg.send_buffer_bytes);
  // The job's first message gives the first estimate of its bytes: a small job takes class 0 before its first
  // window goes out, not only at its first epoch end (size-aware class, docs/protocol.md section 11).
  if (st == Status::kOk && j.messages_submitted() == 1) j.rate.on_size_known(now, j.remaining_bytes());
  if (st == Status::kOk && j.messages_submitted() > 1) j.rate.on_remaining(now, j.remaining_bytes());
  return st;
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
  const size_t per = packet::updates_per_frame(I.cfg.max_datagram);
  std::vector<wire::UpdateEntry> entries;
  for (const auto& [gi, msr] : msrs)
    entries.push_back({gi, j.set_target(gi, slack::target_of(msr, j.groups[gi].spec.size))});
  for (size_t first = 0; first < entries.size(); first += per) {
    const size_t n = std::min(per, entries.size() - first);
    I.queue_control(s, PacketType::kUpdate, jid, packet::update_body(jid, entries.data() + first, n));
  }
  (void)now;
  return Status::kOk;
}

Status Engine::cancel_job(SessionId sid, JobId jid, TimeNs now) {
  auto& I = *impl_;
  Session* sp = I.find(sid);
  if (!sp) return Status::kNotFound;
  if (!sp->send_jobs.count(jid)) return Status::kNotFound;
  I.finish_send_job(*sp, jid, Status::kClosed, now);
  I.queue_control(*sp, PacketType::kCancel, jid, packet::cancel_body(jid));
  return Status::kOk;
}

Status Engine::release(uint64_t handle) {
  auto& I = *impl_;
  auto it = I.delivered.find(handle);
  if (it == I.delivered.end()) return Status::kNotFound;
  Session* s = I.find(it->second.session);
  if (s && s->generation == it->second.generation) {
    const uint64_t charge = RecvJob::held_charge(it->second.buf.size());
    s->recv.used -= std::min<uint64_t>(s->recv.used, charge);
    s->recv.app_held -= std::min<uint64_t>(s->recv.app_held, charge);
    // Reopen a window the sender may be waiting on.
    if (s->last_advertised_window < I.cfg.recv_buffer_bytes / 4) s->ack_now = true;
    s->recv.spare.put(std::move(it->second.buf));  // the session's next message reuses it
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
    out->dscp = I.control_dscp();
    out->len = f.bytes.size();
    return true;
  }
  if (I.sessions.empty()) return false;
  // Round-robin over sessions, starting after the one served last. Datagrams swallowed by fault injection are
  // built and paced like real ones; a bounded number are tried per call.
  for (int attempt = 0; attempt < 64; ++attempt) {
    size_t len = 0;
    uint8_t dscp = 0;
    Session* from = nullptr;
    // transmit_from(s, now) can only produce something when a control, ack, ping or abandon deadline has come
    // (timeout_a <= now) or data is due and the host pacer allows it (timeout_b <= now, global_next_send <= now):
    // take those sessions from the deadline sets, in session-id order starting after the cursor - the order of
    // the round-robin over all sessions.
    I.refresh_timeouts();
    std::vector<SessionId>& due = I.due_scratch;
    due.clear();
    for (auto d = I.due_a.begin(); d != I.due_a.end() && d->first <= now; ++d) due.push_back(d->second);
    if (I.global_next_send <= now)
      for (auto d = I.due_b.begin(); d != I.due_b.end() && d->first <= now; ++d) due.push_back(d->second);
    // Round-robin modes: everything a session has, in the round-robin order. MRDF modes: first the non-DATA part
    // of every due session (round-robin), then the DATA slot by MRDF across sessions (pick_data_session).
    const auto part = I.mrdf_across ? Impl::Part::kControl : Impl::Part::kAll;
    // The next in that order is the smallest id above the cursor, else the smallest id: one pass (the first
    // candidate nearly always transmits, so no sort per call); a candidate that yields nothing is dropped.
    while (!due.empty() && !from) {
      const SessionId id = due[scheduler::round_robin_pick(due, I.rr_cursor)];
      due.erase(std::remove(due.begin(), due.end(), id), due.end());  // it may be listed twice (a and b)
      auto it = I.sessions.find(id);
      if (it == I.sessions.end()) continue;
      Session& s = *it->second;
      I.touch(s);
      len = I.transmit_from(s, now, buf, &dscp, part);
      if (len) from = &s;
    }
    if (!from && I.mrdf_across && I.global_next_send <= now) {
      // The due_b entries up to now are the sessions with a job whose own pacing time has come: the one whose
      // cached order is first sends; should it have nothing after all, the others follow (by pacing time).
      Session* pick = I.pick_data_session(now);
      if (pick) {
        I.touch(*pick);
        len = I.transmit_from(*pick, now, buf, &dscp, Impl::Part::kData);
        if (len) from = pick;
      }
      for (auto d = I.due_b.begin(); d != I.due_b.end() && d->first <= now && !from; ++d) {
        auto it = I.sessions.find(d->second);
        if (it == I.sessions.end() || it->second.get() == pick) continue;
        Session& s = *it->second;
        I.touch(s);
        len = I.transmit_from(s, now, buf, &dscp, Impl::Part::kData);
        if (len) from = &s;
      }
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
  const auto& I = *impl_;
  I.refresh_timeouts();
  TimeNs t = I.farewells.empty() ? kNever : I.clock;
  if (!I.due_a.empty()) t = std::min(t, I.due_a.begin()->first);
  if (!I.due_b.empty()) t = std::min(t, std::max(I.due_b.begin()->first, I.global_next_send));
  return t;
}

TimeNs Engine::next_timeout_reference() const {
  TimeNs t = impl_->farewells.empty() ? kNever : impl_->clock;
  for (const auto& [id, s] : impl_->sessions) t = std::min(t, impl_->session_timeout(*s));
  return t;
}

void Engine::on_timeout(TimeNs now) {
  auto& I = *impl_;
  I.clock = now;
  // Only sessions with a timer due (timeout_a <= now) have anything to do in session_timers: every condition it
  // checks is one of timeout_a's terms.
  I.refresh_timeouts();
  std::vector<SessionId>& ids = I.timer_scratch;
  ids.clear();
  for (auto it = I.due_a.begin(); it != I.due_a.end() && it->first <= now; ++it) ids.push_back(it->second);
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
    s.recv_buffered += sess->recv.used;
  }
  return s;
}

}  // namespace netapprox::atp
