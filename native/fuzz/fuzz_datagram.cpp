// libFuzzer target for the ATP datagram path: the wire parsers and the engine behind them.
//
// Every input (format: fuzz_input.hpp) gets a fresh Engine with one session whose id and key are fixed, so that the
// "sealed" mode can produce authenticated packets and reach the state machine behind authentication. The harness
//   * runs every wire::parse_* directly on the input and on every record body, and checks what a successful parse
//     returns (in bounds, consistent, and re-encoding gives back the same bytes);
//   * drives the engine: on_datagram, poll_transmit a few times, on_timeout, poll_event (releasing kMessage
//     handles, reading every delivered byte so ASan sees use-after-free);
//   * checks every datagram the engine emits: it fits max_datagram, authenticates with the session key and parses;
//   * checks the buffer accounting never underflows.
// A violated check calls __builtin_trap(), which libFuzzer reports as a crash.
//
// Build: CC=clang CXX=clang++ cmake -S native -B native/build-fuzz -G Ninja -DNETAPPROX_FUZZ=ON -DNETAPPROX_TESTS=OFF
//        ninja -C native/build-fuzz fuzz_datagram
// Run:   native/build-fuzz/fuzz_datagram -max_total_time=600 -timeout=10 native/fuzz/corpus
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/crypto.hpp"
#include "core/engine.hpp"
#include "core/wire.hpp"
#include "fuzz_input.hpp"

using namespace netapprox;
using namespace netapprox::atp;

namespace {

#define FUZZ_CHECK(cond)           \
  do {                             \
    if (!(cond)) __builtin_trap(); \
  } while (0)

// Volatile sink so that reads of delivered bytes are not optimised away.
volatile uint8_t g_sink;

void touch(const uint8_t* p, size_t n) {
  uint8_t x = 0;
  for (size_t i = 0; i < n; ++i) x ^= p[i];
  g_sink = x;
}

// ------------------------------------------------------------------------------------------ parser oracles

void w16(std::vector<uint8_t>& v, uint16_t x) { fuzz::put_be(v, x, 2); }
void w32(std::vector<uint8_t>& v, uint32_t x) { fuzz::put_be(v, x, 4); }
void w64(std::vector<uint8_t>& v, uint64_t x) { fuzz::put_be(v, x, 8); }

bool same(const std::vector<uint8_t>& v, const uint8_t* p, size_t n) {
  return v.size() == n && (n == 0 || std::memcmp(v.data(), p, n) == 0);
}

void parse_all(const uint8_t* p, size_t n) {
  wire::Header h;
  if (wire::parse_header(p, n, &h) == wire::ParseError::kOk) {
    FUZZ_CHECK(size_t{h.body_len} + wire::kOverheadBytes == n);
    FUZZ_CHECK(static_cast<uint8_t>(h.type) >= 1 && static_cast<uint8_t>(h.type) <= 10);
  }
  wire::Data d;
  if (wire::parse_data(p, n, &d) == wire::ParseError::kOk) {
    FUZZ_CHECK(d.payload == p + wire::kDataHeaderBytes);
    FUZZ_CHECK(d.seg_size > 0 && d.msg_len > 0 && d.offset % d.seg_size == 0 && d.offset < d.msg_len);
    FUZZ_CHECK(d.payload_len > 0 && d.payload_len == std::min<uint32_t>(d.seg_size, d.msg_len - d.offset));
    FUZZ_CHECK(uint64_t{d.offset} + d.payload_len <= d.msg_len);
    // A body longer than 65535 + 20 bytes cannot come from a datagram (body_len is 16 bits), but the parser must
    // still not accept a length it truncated.
    FUZZ_CHECK(n <= wire::kDataHeaderBytes + 0xFFFF ? d.payload_len == n - wire::kDataHeaderBytes : true);
    touch(d.payload, d.payload_len);
  }
  wire::Bundle bu;
  if (wire::parse_bundle(p, n, &bu) == wire::ParseError::kOk) {
    // Entries tile the body exactly, each with at least one byte; re-encoding gives back the input.
    FUZZ_CHECK(!bu.entries.empty());
    std::vector<uint8_t> v;
    w32(v, bu.job);
    w16(v, static_cast<uint16_t>(bu.entries.size()));
    w16(v, 0);
    for (const auto& e : bu.entries) {
      FUZZ_CHECK(e.len > 0 && e.payload >= p && e.payload + e.len <= p + n);
      w32(v, e.msg);
      w16(v, e.len);
      v.insert(v.end(), e.payload, e.payload + e.len);
    }
    FUZZ_CHECK(same(v, p, n));
  }
  wire::Ack a;
  if (wire::parse_ack(p, n, &a) == wire::ParseError::kOk) {
    FUZZ_CHECK(!a.ranges.empty() && a.ranges.size() <= wire::kMaxAckRanges);
    FUZZ_CHECK(a.ranges[0].high == a.largest);
    for (size_t i = 0; i < a.ranges.size(); ++i) {
      FUZZ_CHECK(a.ranges[i].low <= a.ranges[i].high);
      if (i) FUZZ_CHECK(a.ranges[i].high + 2 <= a.ranges[i - 1].low);  // descending, a gap of >= 1 between
    }
    std::vector<uint8_t> v;
    w64(v, a.largest);
    w32(v, a.ack_delay_us);
    w16(v, static_cast<uint16_t>(a.ranges.size()));
    w16(v, 0);
    w64(v, a.window);
    w32(v, static_cast<uint32_t>(a.ranges[0].high - a.ranges[0].low));
    for (size_t i = 1; i < a.ranges.size(); ++i) {
      w32(v, static_cast<uint32_t>(a.ranges[i - 1].low - a.ranges[i].high - 2));
      w32(v, static_cast<uint32_t>(a.ranges[i].high - a.ranges[i].low));
    }
    FUZZ_CHECK(same(v, p, n));
  }
  wire::Announce an;
  if (wire::parse_announce(p, n, &an) == wire::ParseError::kOk) {
    FUZZ_CHECK(!an.entries.empty() && an.n_groups > 0 && an.first_group < an.n_groups);
    FUZZ_CHECK(uint64_t{an.first_group} + an.entries.size() <= an.n_groups);
    std::vector<uint8_t> v;
    w32(v, an.job);
    w32(v, an.n_messages);
    w32(v, an.n_groups);
    w32(v, an.first_group);
    w16(v, static_cast<uint16_t>(an.entries.size()));
    w16(v, an.flags);
    for (const auto& e : an.entries) {
      FUZZ_CHECK(e.target <= e.size);
      w64(v, e.group_id);
      w32(v, e.size);
      w32(v, e.target);
    }
    FUZZ_CHECK(same(v, p, n));
  }
  wire::Update u;
  if (wire::parse_update(p, n, &u) == wire::ParseError::kOk) {
    FUZZ_CHECK(!u.entries.empty());
    std::vector<uint8_t> v;
    w32(v, u.job);
    w16(v, static_cast<uint16_t>(u.entries.size()));
    w16(v, 0);
    for (const auto& e : u.entries) {
      w32(v, e.group_index);
      w32(v, e.target);
    }
    FUZZ_CHECK(same(v, p, n));
  }
  wire::Abandon ab;
  if (wire::parse_abandon(p, n, &ab) == wire::ParseError::kOk) {
    FUZZ_CHECK(!ab.msgs.empty());
    std::vector<uint8_t> v;
    w32(v, ab.job);
    w16(v, static_cast<uint16_t>(ab.msgs.size()));
    w16(v, 0);
    for (uint32_t m : ab.msgs) w32(v, m);
    FUZZ_CHECK(same(v, p, n));
  }
  wire::Done dn;
  if (wire::parse_done(p, n, &dn) == wire::ParseError::kOk) {
    std::vector<uint8_t> v;
    w32(v, dn.job);
    w32(v, static_cast<uint32_t>(dn.status));
    w32(v, dn.delivered);
    w32(v, dn.lost);
    w32(v, dn.attempt);
    if (!dn.group_delivered.empty()) {
      w32(v, static_cast<uint32_t>(dn.group_delivered.size()));
      for (uint32_t g : dn.group_delivered) w32(v, g);
    }
    FUZZ_CHECK(same(v, p, n));
  }
  int32_t code;
  if (wire::parse_close(p, n, &code) == wire::ParseError::kOk) FUZZ_CHECK(n == 4);
  uint32_t job;
  if (wire::parse_cancel(p, n, &job) == wire::ParseError::kOk) FUZZ_CHECK(n == 4);
}

// ------------------------------------------------------------------------------------------ engine harness

class Harness {
 public:
  explicit Harness(uint8_t control) : control_(control), eng_(make_config(control)) {
    eng_.set_trace_epochs(control & fuzz::kTrace);
    open();
    if (control & fuzz::kSendJob) start_send_job();
    pump(4);
  }

  ~Harness() {
    // Let everything time out: peer death (5 s) and idle (30 s) paths run, then release what the app still holds.
    for (TimeNs step : {TimeNs(6'000'000'000ULL), TimeNs(31'000'000'000ULL)}) {
      now_ += step;
      eng_.on_timeout(now_);
      pump(4);
      drain();
    }
    for (uint64_t h : kept_) eng_.release(h);
    check_accounting();
  }

  void feed_raw(const uint8_t* p, size_t n) {
    eng_.on_datagram(p, n, fuzz::kPeer, now_);
    step();
  }

  void run_records(const uint8_t* p, size_t n) {
    size_t i = 0;
    for (int records = 0; records < 256; ++records) {
      if (n - i < 2) return;
      uint8_t op = p[i] % fuzz::kNumOps;
      const uint8_t flags = p[i + 1];
      i += 2;
      uint64_t pn = next_pn_;
      if (flags & fuzz::kExplicitPn) {
        if (n - i < 8) return;
        pn = wire::load64(p + i);
        i += 8;
      }
      if (n - i < 3) return;
      const uint8_t dt = p[i];
      size_t len = wire::load16(p + i + 1);
      i += 3;
      len = std::min(len, n - i);
      const uint8_t* body = p + i;
      i += len;

      if (dt == 254) {
        const TimeNs t = eng_.next_timeout();
        if (t != kNever && t > now_) now_ = std::min(t, now_ + TimeNs(60'000'000'000ULL));
      } else {
        now_ += dt == 255 ? TimeNs(2'000'000'000) : TimeNs(dt) * 100'000;
      }
      parse_all(body, len);
      if (op < 9 || op == fuzz::kOpBundle) {
        send_packet(op < 9 ? static_cast<wire::PacketType>(op + 1) : wire::PacketType::kDataBundle, flags, pn, body,
                    len);
        if (!(flags & fuzz::kExplicitPn)) ++next_pn_;
      } else if (op == fuzz::kOpUpdateMsr) {
        std::vector<std::pair<uint32_t, double>> msrs;
        for (size_t k = 0; k + 1 < len && msrs.size() < 8; k += 2) msrs.push_back({body[k] % 3, body[k + 1] / 255.0});
        eng_.update_msr(fuzz::kSessionId, fuzz::kSendJobId, msrs, now_);
      } else if (op == fuzz::kOpCancel) {
        eng_.cancel_job(fuzz::kSessionId, fuzz::kSendJobId, now_);
      } else if (op == fuzz::kOpReopen) {
        eng_.close_session(fuzz::kSessionId, now_);
        pump(1);  // the sealed CLOSE goes out first, still in the closed session's packet-number sequence
        open();
        next_pn_ = 0;
        // The reopened session starts its packet numbers at 0 again under the same key (see docs/protocol.md:
        // a key must never serve two sessions); the nonce-uniqueness check restarts with it.
        seen_any_pn_ = false;
      }
      if (!(flags & fuzz::kNoPoll)) step(!(flags & fuzz::kNoDrain));
    }
  }

 private:
  static EngineConfig make_config(uint8_t control) {
    EngineConfig c;
    c.max_datagram = 1472;
    c.recv_buffer_bytes = 64 << 10;  // the smallest allowed: admission and window paths are reachable
    c.send_buffer_bytes = 256 << 10;
    c.max_message_bytes = 1 << 20;
    c.max_jobs_per_session = 8;
    c.max_messages_per_job = 1 << 16;
    c.max_groups_per_job = 256;
    c.max_pending_events = 64;
    c.mode = static_cast<Mode>(((control >> fuzz::kModeShift) & 7) % 7);
    c.payload_auth = ((control >> fuzz::kModeShift) & 7) < 6;
    if (control & fuzz::kFaults) {
      c.faults.drop_incoming = 0.1;
      c.faults.drop_outgoing = 0.1;
      c.faults.seed = 42;
    }
    return c;
  }

  void open() { eng_.open_session(fuzz::kSessionId, fuzz::session_key(), fuzz::kPeer, fuzz::kEngineIsInitiator, now_); }

  void start_send_job() {
    JobSpec spec;
    spec.job_id = fuzz::kSendJobId;
    spec.groups = {{100, fuzz::kExactMsgs, 1.0}, {200, fuzz::kApproxMsgs, 0.5}};
    if (eng_.start_job(fuzz::kSessionId, spec, now_) != Status::kOk) return;
    std::vector<uint8_t> data(fuzz::send_job_msg_len(0, fuzz::kExactMsgs - 1));
    for (size_t k = 0; k < data.size(); ++k) data[k] = static_cast<uint8_t>(k * 7);
    for (uint32_t g = 0; g < 2; ++g)
      for (uint32_t i = 0; i < (g == 0 ? fuzz::kExactMsgs : fuzz::kApproxMsgs); ++i)
        eng_.submit(fuzz::kSessionId, fuzz::kSendJobId, g, i, data.data(), fuzz::send_job_msg_len(g, i), now_);
  }

  void send_packet(wire::PacketType type, uint8_t flags, uint64_t pn, const uint8_t* body, size_t len) {
    len = std::min(len, wire::kMaxDatagram - wire::kOverheadBytes);
    std::vector<uint8_t> pkt(wire::kOverheadBytes + len);
    const bool from_initiator = (flags & fuzz::kWrongDirection) ? fuzz::kEngineIsInitiator : !fuzz::kEngineIsInitiator;
    const uint64_t session = (flags & fuzz::kWrongSession) ? fuzz::kSessionId ^ 1 : fuzz::kSessionId;
    const bool header_only = (flags & fuzz::kHeaderOnly) && len >= wire::kDataHeaderBytes;
    const uint8_t hflags = static_cast<uint8_t>(((flags & fuzz::kAesTag) ? wire::kFlagAesGcm : 0) |
                                                (header_only ? wire::kFlagHeaderOnlyAuth : 0));
    wire::write_header(pkt.data(), type, from_initiator, session, pn, hflags);
    wire::set_body_len(pkt.data(), static_cast<uint16_t>(len));
    if (len) std::memcpy(pkt.data() + wire::kHeaderBytes, body, len);
    const size_t covered = wire::kHeaderBytes + (header_only ? wire::kDataHeaderBytes : len);
    crypto::seal(fuzz::session_key(), from_initiator, pn, pkt.data(), covered, pkt.data() + wire::kHeaderBytes + len);
    if (flags & fuzz::kBadTag) pkt[wire::kHeaderBytes + len] ^= 0x01;
    eng_.on_datagram(pkt.data(), pkt.size(), fuzz::kPeer, now_);
  }

  void step(bool drain_events = true) {
    pump(8);
    eng_.on_timeout(now_);
    pump(4);
    // next_timeout() is "the earliest time poll_transmit/on_timeout has work": if it says now, they must do it.
    if (eng_.next_timeout() <= now_) {
      eng_.on_timeout(now_);
      pump(4);
    }
    if (drain_events) drain();
    check_accounting();
  }

  // Every datagram the engine emits must be one the protocol accepts.
  void pump(int n) {
    for (int k = 0; k < n; ++k) {
      Transmit t;
      if (!eng_.poll_transmit(now_, out_, sizeof out_, &t)) return;
      FUZZ_CHECK(t.len >= wire::kOverheadBytes && t.len <= eng_.config().max_datagram);
      FUZZ_CHECK(t.peer == fuzz::kPeer);
      FUZZ_CHECK(t.dscp <= 63);
      wire::Header h;
      FUZZ_CHECK(wire::parse_header(out_, t.len, &h) == wire::ParseError::kOk);
      FUZZ_CHECK(h.session == fuzz::kSessionId && h.from_initiator == fuzz::kEngineIsInitiator);
      // Header-only authentication only for DATA, and only when the engine was configured for it.
      const bool header_only = (h.flags & wire::kFlagHeaderOnlyAuth) != 0;
      FUZZ_CHECK(!header_only || (h.type == wire::PacketType::kData && !eng_.config().payload_auth));
      const size_t covered = wire::kHeaderBytes + (header_only ? wire::kDataHeaderBytes : h.body_len);
      FUZZ_CHECK(crypto::verify(fuzz::session_key(), h.from_initiator, h.packet_number, out_, covered,
                                out_ + wire::kHeaderBytes + h.body_len));
      FUZZ_CHECK(!seen_any_pn_ || h.packet_number > last_pn_);  // packet numbers (nonces) never repeat
      seen_any_pn_ = true;
      last_pn_ = h.packet_number;
      const uint8_t* b = out_ + wire::kHeaderBytes;
      const size_t bl = h.body_len;
      wire::ParseError e = wire::ParseError::kOk;
      switch (h.type) {
        case wire::PacketType::kData: {
          wire::Data d;
          e = wire::parse_data(b, bl, &d);
          break;
        }
        case wire::PacketType::kAck: {
          wire::Ack a;
          e = wire::parse_ack(b, bl, &a);
          break;
        }
        case wire::PacketType::kAnnounce: {
          wire::Announce a;
          e = wire::parse_announce(b, bl, &a);
          break;
        }
        case wire::PacketType::kUpdate: {
          wire::Update u;
          e = wire::parse_update(b, bl, &u);
          break;
        }
        case wire::PacketType::kAbandon: {
          wire::Abandon a;
          e = wire::parse_abandon(b, bl, &a);
          break;
        }
        case wire::PacketType::kDone: {
          wire::Done d;
          e = wire::parse_done(b, bl, &d);
          break;
        }
        case wire::PacketType::kPing: e = bl == 0 ? wire::ParseError::kOk : wire::ParseError::kBadBody; break;
        case wire::PacketType::kClose: {
          int32_t c;
          e = wire::parse_close(b, bl, &c);
          break;
        }
        case wire::PacketType::kCancel: {
          uint32_t j;
          e = wire::parse_cancel(b, bl, &j);
          break;
        }
        case wire::PacketType::kDataBundle: {
          wire::Bundle bu;
          e = wire::parse_bundle(b, bl, &bu);
          break;
        }
      }
      FUZZ_CHECK(e == wire::ParseError::kOk);
    }
  }

  void drain() {
    Event ev;
    for (int k = 0; k < 100000 && eng_.poll_event(&ev); ++k) {
      if (ev.type == EventType::kMessage) {
        FUZZ_CHECK(ev.len > 0 && ev.data != nullptr);
        touch(ev.data, ev.len);
        if (control_ & fuzz::kKeepHandles) {
          kept_.push_back(ev.handle);
        } else {
          FUZZ_CHECK(eng_.release(ev.handle) == Status::kOk);
          FUZZ_CHECK(eng_.release(ev.handle) == Status::kNotFound);
        }
      } else if (ev.type == EventType::kJobDone) {
        FUZZ_CHECK(ev.report != nullptr);
        const JobReport& r = *ev.report;
        FUZZ_CHECK(r.delivered <= r.messages && r.lost <= r.messages);
        for (const auto& g : r.groups) {
          FUZZ_CHECK(g.delivered <= g.size);
          FUZZ_CHECK(id_count(g.delivered_ranges) + id_count(g.lost_ranges) <= g.size);
          FUZZ_CHECK(!r.ids_listed || id_count(g.delivered_ranges) == g.delivered);
        }
      }
    }
  }

  // Buffer accounting is unsigned: an underflow shows up as an absurd number.
  void check_accounting() {
    const EngineStats s = eng_.stats();
    FUZZ_CHECK(s.send_buffered < (uint64_t{1} << 40));
    FUZZ_CHECK(s.recv_buffered < (uint64_t{1} << 40));
  }

  uint8_t control_;
  Engine eng_;
  TimeNs now_ = fuzz::kStartTime;
  uint64_t next_pn_ = 0;
  uint64_t last_pn_ = 0;
  bool seen_any_pn_ = false;
  std::vector<uint64_t> kept_;
  uint8_t out_[wire::kMaxDatagram];
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t control = data[0];
  const uint8_t* rest = data + 1;
  const size_t n = size - 1;
  parse_all(rest, n);
  // The parsers also see the body slice of a datagram-shaped input.
  if (n > wire::kOverheadBytes) parse_all(rest + wire::kHeaderBytes, n - wire::kOverheadBytes);
  Harness h(control);
  if (control & fuzz::kSealed) {
    h.run_records(rest, n);
  } else {
    h.feed_raw(rest, n);
  }
  return 0;
}
