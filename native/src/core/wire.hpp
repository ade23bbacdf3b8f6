// ATP wire format (version 2). Every datagram is:
//
//   offset  size  field
//   0       2     magic 0x4E41 ("NA")
//   2       1     version (2)
//   3       1     type (PacketType)
//   4       1     flags: bit 0 = sent by the session's initiator; bit 1 = tag is AES-256-GCM (else
//                 ChaCha20-Poly1305); bit 2 = the tag covers only header + data header (payload_auth off);
//                 bit 3 = the sender can check AES-GCM tags; bit 4 = the sender accepts DATA bundles (type 10);
//                 other bits must be 0
//   5       1     reserved, must be 0
//   6       2     body length
//   8       8     session id
//   16      8     packet number (per session and direction, strictly increasing)
//   24      n     body (layout per type, below)
//   24+n    16    authentication tag: AEAD with empty plaintext over bytes [0, 24+n) as associated data
//                 (ChaCha20-Poly1305 IETF, or AES-256-GCM where the CPU has AES-NI: flag bit 1),
//                 key = the session secret, nonce = direction (4 bytes) || packet number (8 bytes)
//
// All integers are big-endian. Parsing validates every field and the exact length before anything else reads
// the packet; the authentication tag is checked before the body is interpreted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace netapprox::atp::wire {

constexpr uint16_t kMagic = 0x4E41;
constexpr uint8_t kVersion = 2;  // 2: DONE carries its transmission number
constexpr size_t kHeaderBytes = 24;
constexpr size_t kTagBytes = 16;
constexpr size_t kOverheadBytes = kHeaderBytes + kTagBytes;
constexpr size_t kMinDatagram = 256;    // smallest max_datagram the engine accepts
constexpr size_t kMaxDatagram = 65507;  // largest UDP payload over IPv4
constexpr uint8_t kFlagInitiator = 0x01;
constexpr uint8_t kFlagAesGcm = 0x02;
constexpr uint8_t kFlagHeaderOnlyAuth = 0x04;
// The sender can check AES-256-GCM tags and prefers them. A sender tags with AES-GCM only after an authenticated
// packet from the peer carried this bit, so hosts without AES-NI (or with prefer_aes_gcm off) get ChaCha20-Poly1305.
constexpr uint8_t kFlagAesCapable = 0x08;
// The sender accepts DATA bundles (type 10). A sender coalesces small messages into bundles only after an
// authenticated packet from the peer carried this bit, so a peer configured without bundles gets plain DATA.
constexpr uint8_t kFlagBundles = 0x10;
constexpr uint8_t kKnownFlags = kFlagInitiator | kFlagAesGcm | kFlagHeaderOnlyAuth | kFlagAesCapable | kFlagBundles;

enum class PacketType : uint8_t {
  kData = 1,         // job u32, msg u32, msg_len u32, offset u32, seg_size u16, reserved u16, payload
  kAck = 2,          // largest u64, ack_delay_us u32, range_count u16, reserved u16, window u64,
                     // first_range u32, then range_count-1 x {gap u32, len u32}
  kAnnounce = 3,     // job u32, n_messages u32, n_groups u32, first_group u32, count u16, flags u16,
                     // count x {group_id u64, size u32, target u32}
  kUpdate = 4,       // job u32, count u16, reserved u16, count x {group_index u32, target u32}
  kAbandon = 5,      // job u32, count u16, reserved u16, count x msg u32
  kDone = 6,         // job u32, status i32, delivered u32, lost u32, attempt u32   (receiver -> sender)
                     // [, n u32 >= 1, n x delivered u32 per group]   (when the group table fits one datagram)
  kPing = 7,         // empty; elicits an ack (keep-alive, probes)
  kClose = 8,        // code i32
  kCancel = 9,       // job u32                                         (sender -> receiver)
  kDataBundle = 10,  // job u32, count u16, reserved u16, count x {msg u32, len u16, payload[len]}: whole messages
};

constexpr size_t kDataHeaderBytes = 20;
constexpr size_t kAckFixedBytes = 28;
constexpr size_t kMaxAckRanges = 64;
constexpr size_t kAnnounceFixedBytes = 20;
constexpr size_t kAnnounceEntryBytes = 16;
constexpr size_t kListFixedBytes = 8;  // kUpdate and kAbandon
constexpr size_t kUpdateEntryBytes = 8;
constexpr size_t kDoneFixedBytes = 20;
constexpr uint16_t kAnnounceFlagMrdf = 0x0001;
constexpr size_t kBundleFixedBytes = 8;
constexpr size_t kBundleEntryBytes = 6;  // before each message's payload

struct Header {
  PacketType type;
  bool from_initiator;
  uint8_t flags;  // all flag bits, including kFlagInitiator
  uint16_t body_len;
  uint64_t session;
  uint64_t packet_number;
};

struct Data {
  uint32_t job, msg, msg_len, offset;
  uint16_t seg_size;
  const uint8_t* payload;
  uint16_t payload_len;
};

// A DATA bundle: several whole messages of one job in one datagram (each is its message's only segment).
struct BundleEntry {
  uint32_t msg;
  const uint8_t* payload;
  uint16_t len;
};
struct Bundle {
  uint32_t job;
  std::vector<BundleEntry> entries;  // in wire order; reusing one Bundle keeps its capacity
};

struct AckRange {
  uint64_t low, high;  // inclusive
};
struct Ack {
  uint64_t largest;
  uint32_t ack_delay_us;
  uint64_t window;
  std::vector<AckRange> ranges;  // descending, disjoint
};

struct AnnounceEntry {
  uint64_t group_id;
  uint32_t size, target;
};
struct Announce {
  uint32_t job, n_messages, n_groups, first_group;
  uint16_t flags;
  std::vector<AnnounceEntry> entries;
};

struct UpdateEntry {
  uint32_t group_index, target;
};
struct Update {
  uint32_t job;
  std::vector<UpdateEntry> entries;
};

struct Abandon {
  uint32_t job;
  std::vector<uint32_t> msgs;
};

struct Done {
  uint32_t job;
  int32_t status;
  uint32_t delivered, lost;
  uint32_t attempt;                       // which transmission of this DONE (1 = the first), for the sender's report
  std::vector<uint32_t> group_delivered;  // optional: the receiver's per-group counts, in announce order
};

// Parse results. kOk means the header is structurally valid (authentication is separate).
enum class ParseError { kOk, kTooShort, kBadMagic, kBadVersion, kBadType, kBadFlags, kBadLength, kBadBody };

ParseError parse_header(const uint8_t* p, size_t len, Header* h);
// Body parsers take the body slice (after the header, before the tag).
ParseError parse_data(const uint8_t* body, size_t len, Data* d);
ParseError parse_bundle(const uint8_t* body, size_t len, Bundle* b);
ParseError parse_ack(const uint8_t* body, size_t len, Ack* a);
ParseError parse_announce(const uint8_t* body, size_t len, Announce* a);
ParseError parse_update(const uint8_t* body, size_t len, Update* u);
ParseError parse_abandon(const uint8_t* body, size_t len, Abandon* a);
ParseError parse_done(const uint8_t* body, size_t len, Done* d);
ParseError parse_close(const uint8_t* body, size_t len, int32_t* code);
ParseError parse_cancel(const uint8_t* body, size_t len, uint32_t* job);

// Writers append to a bounded buffer; they return the number of body bytes written (0 if it does not fit).
class Writer {
 public:
  Writer(uint8_t* buf, size_t cap) : buf_(buf), cap_(cap) {}
  bool u8(uint8_t v);
  bool u16(uint16_t v);
  bool u32(uint32_t v);
  bool u64(uint64_t v);
  bool bytes(const uint8_t* p, size_t n);
  size_t size() const { return len_; }
  size_t room() const { return cap_ - len_; }
  uint8_t* data() { return buf_; }

 private:
  uint8_t* buf_;
  size_t cap_;
  size_t len_ = 0;
};

// Writes the common header with body_len set later by finish_header.
void write_header(uint8_t* p, PacketType type, bool from_initiator, uint64_t session, uint64_t pn,
                  uint8_t extra_flags = 0);
void set_body_len(uint8_t* p, uint16_t body_len);

uint16_t load16(const uint8_t* p);
uint32_t load32(const uint8_t* p);
uint64_t load64(const uint8_t* p);

}  // namespace netapprox::atp::wire
