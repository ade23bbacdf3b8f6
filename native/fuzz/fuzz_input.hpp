// Input format of the fuzz_datagram target, shared with the seed-corpus generator
// (native/tests/core/wire_test.cpp, test FuzzCorpus.*; set NETAPPROX_WRITE_FUZZ_CORPUS=<dir> to write the files).
//
// byte 0 = control
//   bit 0   0: "raw"    - the rest of the input is one datagram, fed to Engine::on_datagram as is
//           1: "sealed" - the rest is a list of records (below); the harness writes a correct header for each packet
//                         record, appends its body and seals it with the session key, so that the body parsers and the
//                         state machine behind authentication are reached
//   bit 1   the engine also runs a send job (kSendJob) on the session, so ACK/DONE/... reach sender state
//   bits 2-4 atp::Mode = value % 7; values 6 and 7 (modes Paper and Base) also turn EngineConfig.payload_auth off
//   bit 5   epoch tracing on
//   bit 6   fault injection (drop 10% of incoming and outgoing datagrams, seeded)
//   bit 7   keep kMessage handles until the end (do not release at once): exercises flow control
//
// sealed record = op u8, flags u8, [pn u64 if flags & kExplicitPn], dt u8, len u16 (big-endian), len bytes
//   op % kNumOps: 0..8 = a packet of type op + 1 with the len bytes as its body;
//                 9 = update_msr on the send job (body: pairs of {group u8, msr u8 (/255)}),
//                 10 = cancel_job on the send job, 11 = close_session and reopen it, 12 = only let time pass,
//                 13 = a DATA bundle (type 10) with the len bytes as its body
//   flags: kWrongDirection - the initiator flag of our own side (a reflected packet)
//          kExplicitPn     - a packet number follows instead of the next one in sequence
//          kBadTag         - one tag bit flipped after sealing
//          kWrongSession   - session id xor 1 (unknown session)
//          kNoPoll         - do not poll/transmit/time out after this record
//          kNoDrain        - do not drain events after this record (fills the event queue)
//          kAesTag         - header flag kFlagAesGcm: the tag is AES-256-GCM (where the CPU has AES-NI)
//          kHeaderOnly     - header flag kFlagHeaderOnlyAuth: the tag covers header + data header only
//   dt: time passes before the record: dt * 100 us; 2 s when dt == 255; up to Engine::next_timeout() when dt == 254
//   len is clamped to what is left of the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace netapprox::fuzz {

constexpr uint64_t kSessionId = 0x0123456789ABCDEFULL;
constexpr uint64_t kPeer = 7;
constexpr uint64_t kStartTime = 1'000'000'000;  // ns
// The engine is the session's initiator; the fuzzer plays the peer (from_initiator = false).
constexpr bool kEngineIsInitiator = true;

inline const uint8_t* session_key() {
  static const uint8_t key[32] = {0x4e, 0x41, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
                                  0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15,
                                  0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f};
  return key;
}

// Control byte bits.
constexpr uint8_t kSealed = 0x01;
constexpr uint8_t kSendJob = 0x02;
constexpr uint8_t kModeShift = 2;
constexpr uint8_t kTrace = 0x20;
constexpr uint8_t kFaults = 0x40;
constexpr uint8_t kKeepHandles = 0x80;

// Record flags.
constexpr uint8_t kWrongDirection = 0x01;
constexpr uint8_t kExplicitPn = 0x02;
constexpr uint8_t kBadTag = 0x04;
constexpr uint8_t kWrongSession = 0x08;
constexpr uint8_t kNoPoll = 0x10;
constexpr uint8_t kNoDrain = 0x20;
constexpr uint8_t kAesTag = 0x40;
constexpr uint8_t kHeaderOnly = 0x80;

constexpr uint8_t kNumOps = 14;
constexpr uint8_t kOpUpdateMsr = 9, kOpCancel = 10, kOpReopen = 11, kOpWait = 12, kOpBundle = 13;

// The send job the engine runs when kSendJob is set: job 77, group 0 = 4 exact messages, group 1 = 8 messages
// with MSR 0.5 (target 4). Message sizes (max_datagram 1472, so 1412 payload bytes per segment): group 0 message i
// is 100 + 1500 * i bytes (1, 2, 3 and 4 segments); group 1 messages are 64 bytes. Everything is submitted before
// the first poll, so the engine's first datagram (pn 0) is the ANNOUNCE and, once it is acknowledged, data packets
// follow with pn 1, 2, ...
constexpr uint32_t kSendJobId = 77;
constexpr uint32_t kExactMsgs = 4, kApproxMsgs = 8;
inline uint32_t send_job_msg_len(uint32_t group, uint32_t index) { return group == 0 ? 100 + 1500 * index : 64; }

struct Record {
  uint8_t op = 0;
  uint8_t flags = 0;
  uint64_t pn = 0;  // used with kExplicitPn
  uint8_t dt = 0;
  std::vector<uint8_t> body;
};

inline void put_be(std::vector<uint8_t>& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

inline std::vector<uint8_t> encode_sealed(uint8_t control, const std::vector<Record>& records) {
  std::vector<uint8_t> out{static_cast<uint8_t>(control | kSealed)};
  for (const auto& r : records) {
    out.push_back(r.op);
    out.push_back(r.flags);
    if (r.flags & kExplicitPn) put_be(out, r.pn, 8);
    out.push_back(r.dt);
    put_be(out, r.body.size(), 2);
    out.insert(out.end(), r.body.begin(), r.body.end());
  }
  return out;
}

}  // namespace netapprox::fuzz
