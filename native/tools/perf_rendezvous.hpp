// atp-perf's TCP rendezvous (it has no control plane): the client tells the server which session to open and
// what job it will send; the server answers, and returns the receiver's report at the end. Everything the server
// reads is bounded and validated before use.
//
//   client -> server   "ATP3", initiator nonce (16 random bytes), client UDP port u16, messages u32,
//                      message bytes u32, group count u16, count x MSR (IEEE-754 f64 bits)   integers big-endian
//   server -> client   'K' session opened, then the responder nonce (16 random bytes)
//                      | 'E' refused | 'B' busy (every connection slot taken)
//   Both ends derive the session key and id from the secret and both nonces (crypto::derive_session), so a
//   recorded session cannot be replayed: the server's fresh nonce gives the replay another key and id.
//   ("ATP2" carried a u64 nonce and used one key for every session; it is refused.)
//   ... the job runs over ATP ...
//   server -> client   verify errors u32 (0xFFFFFFFF: not verified), report length u32, verify length u32,
//                      the receiver's report (JSON), the verifier's verdict (JSON; empty when not verified)
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/crypto.hpp"
#include "socket_io.hpp"

namespace netapprox::perf {

constexpr char kAtpMagic[4] = {'A', 'T', 'P', '3'};
constexpr char kTcpMagic[4] = {'T', 'C', 'P', '1'};
constexpr uint8_t kReplyOk = 'K', kReplyRefused = 'E', kReplyBusy = 'B';
constexpr uint32_t kNotVerified = 0xFFFFFFFFu;
constexpr uint32_t kMaxHelloMessages = 1u << 26;
constexpr uint32_t kMaxHelloMessageBytes = 64u << 20;
constexpr uint16_t kMaxHelloGroups = 1024;
constexpr uint32_t kMaxReportBytes = 1u << 20;

constexpr size_t kNonceBytes = atp::crypto::kSessionNonceBytes;

struct SessionHello {
  uint8_t nonce[kNonceBytes] = {};  // the initiator's (client's) nonce
  uint16_t udp_port = 0;
  uint32_t messages = 0;
  uint32_t message_bytes = 0;
  std::vector<double> msrs;
};

namespace detail {
inline void put(std::vector<uint8_t>* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
inline uint64_t get(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}
}  // namespace detail

inline std::vector<uint8_t> encode_hello(const SessionHello& h) {
  std::vector<uint8_t> out;
  out.reserve(4 + kNonceBytes + 12 + 8 * h.msrs.size());
  for (char c : kAtpMagic) out.push_back(static_cast<uint8_t>(c));
  for (uint8_t b : h.nonce) out.push_back(b);
  detail::put(&out, h.udp_port, 2);
  detail::put(&out, h.messages, 4);
  detail::put(&out, h.message_bytes, 4);
  detail::put(&out, h.msrs.size(), 2);
  for (double m : h.msrs) {
    uint64_t bits;
    std::memcpy(&bits, &m, 8);
    detail::put(&out, bits, 8);
  }
  return out;
}

// Reads a hello after its magic. False, with the reason, on a short read or a value out of bounds.
inline bool read_hello(int fd, SessionHello* h, std::string* why, int timeout_ms) {
  uint8_t b[kNonceBytes + 12];
  if (!tools::read_full(fd, b, sizeof b, timeout_ms)) {
    *why = "short hello";
    return false;
  }
  std::memcpy(h->nonce, b, kNonceBytes);
  const uint8_t* f = b + kNonceBytes;
  h->udp_port = static_cast<uint16_t>(detail::get(f, 2));
  h->messages = static_cast<uint32_t>(detail::get(f + 2, 4));
  h->message_bytes = static_cast<uint32_t>(detail::get(f + 6, 4));
  const uint16_t groups = static_cast<uint16_t>(detail::get(f + 10, 2));
  if (h->udp_port == 0 || h->messages == 0 || h->messages > kMaxHelloMessages || h->message_bytes == 0 ||
      h->message_bytes > kMaxHelloMessageBytes || groups == 0 || groups > kMaxHelloGroups || groups > h->messages) {
    *why = "hello out of bounds (port, messages, message size or group count)";
    return false;
  }
  std::vector<uint8_t> m(size_t(groups) * 8);
  if (!tools::read_full(fd, m.data(), m.size(), timeout_ms)) {
    *why = "short hello";
    return false;
  }
  h->msrs.clear();
  for (uint16_t g = 0; g < groups; ++g) {
    uint64_t bits = detail::get(m.data() + 8 * g, 8);
    double v;
    std::memcpy(&v, &bits, 8);
    if (!(v >= 0.0 && v <= 1.0)) {  // also rejects NaN
      *why = "hello carries an MSR outside [0, 1]";
      return false;
    }
    h->msrs.push_back(v);
  }
  return true;
}

}  // namespace netapprox::perf
