// Packet building: the bytes of every datagram the engine sends, header and tag, and the body of each packet type
// (wire.hpp has the layouts and the parsers). Pure encoders over values: which packet goes out, and what sending it
// means for the session's packet log, pacing and jobs, stays in the engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/crypto.hpp"
#include "core/engine.hpp"
#include "core/wire.hpp"

namespace netapprox::atp {
struct SegmentToSend;
}

namespace netapprox::atp::packet {

// ------------------------------------------------------------------ header and tag

// The header flags of an outgoing packet (wire.hpp): AES-GCM tags once the peer said it checks them, whether this
// endpoint can check them and accepts bundles, and whether the tag covers only header + data header.
uint8_t header_flags(bool use_aes, bool peer_aes_capable, bool header_only, bool bundles);

// Writes the header in front of the body_len bytes at buf + kHeaderBytes and the tag behind them; returns the
// datagram's length. With wire::kFlagHeaderOnlyAuth in `flags` the tag covers the header and the data header
// only (a DATA packet with payload_auth off).
size_t seal(uint8_t* buf, wire::PacketType type, const crypto::SessionKey& key, bool initiator, SessionId session,
            uint64_t pn, uint8_t flags, size_t body_len);

// The payload room of a DATA packet: the datagram minus the header, tag and the data header.
uint32_t segment_room(uint32_t max_datagram);

// ------------------------------------------------------------------ ACK

// The most ranges an ACK lists in a datagram of max_datagram bytes.
size_t max_ack_ranges(uint32_t max_datagram);
// The ACK delay it reports: how long the acknowledgement waited past its first ack-eliciting packet (ack_deadline
// was set ack_delay after it; kNever: sent at once, delay 0).
TimeNs ack_delay(TimeNs now, TimeNs ack_deadline, TimeNs ack_delay_limit);
// An ACK body: `ranges` descending and disjoint (at least one), delay in ns (sent in microseconds, saturating).
size_t write_ack(uint8_t* body, size_t room, uint64_t largest, TimeNs delay, uint64_t window,
                 const std::vector<wire::AckRange>& ranges);

// ------------------------------------------------------------------ DATA

// One segment of one message.
size_t write_data(uint8_t* body, size_t room, JobId job, const SegmentToSend& seg);

// The payload room of a DATA bundle, and the largest message worth bundling (at least two fit).
uint32_t bundle_room(uint32_t max_datagram);
uint32_t max_bundled_message(uint32_t max_datagram);

// Several whole messages of one job in one DATA bundle: begin with the job, add while has_room() and the next
// message is at most fits() bytes, finish() for the body length.
class BundleWriter {
 public:
  BundleWriter(uint8_t* body, uint32_t max_datagram, JobId job);
  bool has_room() const;  // room for one more entry of at least one byte
  uint32_t fits() const;  // the largest next message: at most max_bundled_message and what is left
  void add(MessageId msg, const uint8_t* payload, uint16_t len);
  uint16_t count() const { return count_; }
  size_t finish();  // writes the count; the body's length

 private:
  uint8_t* body_;
  wire::Writer w_;
  uint32_t room_, max_message_;
  uint16_t count_ = 0;
};

// ------------------------------------------------------------------ control frames

// ANNOUNCE: a chunk of the group table, entries [first, first + n) of n_groups.
size_t announce_entries_per_frame(uint32_t max_datagram);
std::vector<uint8_t> announce_body(JobId job, uint32_t n_messages, uint32_t n_groups, uint32_t first, bool mrdf,
                                   const wire::AnnounceEntry* entries, size_t n);

// UPDATE: new targets of n groups.
size_t updates_per_frame(uint32_t max_datagram);
std::vector<uint8_t> update_body(JobId job, const wire::UpdateEntry* entries, size_t n);

// ABANDON: n messages the sender gave up.
size_t abandons_per_frame(uint32_t max_datagram);
std::vector<uint8_t> abandon_body(JobId job, const MessageId* msgs, size_t n);

// DONE (the receiver's report): the per-group delivered counts ride along when they fit one datagram
// (at most done_groups_room; empty `group_delivered`: none). The attempt field is set at each transmission.
size_t done_groups_room(uint32_t max_datagram);
std::vector<uint8_t> done_body(JobId job, Status status, uint32_t delivered, uint32_t lost,
                               const std::vector<uint32_t>& group_delivered);
void set_done_attempt(std::vector<uint8_t>* body, uint32_t attempt);

// CANCEL (sender -> receiver).
std::vector<uint8_t> cancel_body(JobId job);

// CLOSE: why the session ends. The whole datagram, sealed (the session is forgotten right after).
std::vector<uint8_t> close_packet(Status why, const crypto::SessionKey& key, bool initiator, SessionId session,
                                  uint64_t pn, uint8_t flags);

}  // namespace netapprox::atp::packet
