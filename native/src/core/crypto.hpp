// Per-packet authentication: an AEAD with an empty plaintext and the packet (header + body, or header + data
// header when payload authentication is off) as associated data. The algorithm is chosen by the header's flags
// byte, which is part of what is authenticated: AES-256-GCM (flag bit 1; only where the CPU has AES-NI and
// PCLMUL, about 3x cheaper per packet here) or ChaCha20-Poly1305 (IETF). The nonce is direction || packet number,
// unique per key and direction because packet numbers never repeat within a session. Both come from libsodium.
#pragma once

#include <cstddef>
#include <cstdint>

namespace netapprox::atp::crypto {

constexpr size_t kKeyBytes = 32;
constexpr size_t kTagBytes = 16;

// A session key with its AES-GCM key schedule expanded once (the per-packet expansion is measurable).
// The AES-GCM key is a subkey derived from the session key (BLAKE2b KDF), so the two algorithms never share a
// key. Keys are wiped when the SessionKey is destroyed.
struct SessionKey {
  uint8_t key[kKeyBytes];
  alignas(16) unsigned char aes_state[512];
  bool aes_ready = false;
  SessionKey() = default;
  SessionKey(const SessionKey&) = delete;
  SessionKey& operator=(const SessionKey&) = delete;
  ~SessionKey();
};
void prepare(SessionKey* k, const uint8_t key[kKeyBytes]);

// The key schedule. A (key, direction, packet number) triple must never seal two packets: packet numbers
// restart at 0 in every session, so every session needs a key of its own. A session's key and id are derived
// from a long-term master key (the shared secret) and fresh randomness from BOTH ends - the initiator's nonce
// and the responder's nonce, each kSessionNonceBytes from a CSPRNG - with keyed BLAKE2b (libsodium's
// crypto_generichash, the PRF under crypto_kdf) over a label and both nonces. The initiator cannot replay an old
// session (the responder's fresh nonce changes the key), nor can the responder; a new session under one secret
// gets a new key with overwhelming probability. Callers that hand out keys some other way (the Java control
// plane draws a fresh random key per session) must keep the same rule: never open two sessions with one key.
constexpr size_t kSessionNonceBytes = 16;
struct SessionSecrets {
  uint8_t key[kKeyBytes];
  uint64_t session_id;  // never 0
};
void derive_session(const uint8_t master[kKeyBytes], const uint8_t initiator_nonce[kSessionNonceBytes],
                    const uint8_t responder_nonce[kSessionNonceBytes], SessionSecrets* out);

bool init();           // idempotent; false if libsodium cannot initialise
bool aes_available();  // AES-256-GCM usable on this CPU
// `ad` starts with the packet header; its flags byte (ad[4]) selects the algorithm. ad_len >= 5.
void seal(const uint8_t key[kKeyBytes], bool from_initiator, uint64_t pn, const uint8_t* ad, size_t ad_len,
          uint8_t tag[kTagBytes]);
bool verify(const uint8_t key[kKeyBytes], bool from_initiator, uint64_t pn, const uint8_t* ad, size_t ad_len,
            const uint8_t tag[kTagBytes]);
void seal(const SessionKey& k, bool from_initiator, uint64_t pn, const uint8_t* ad, size_t ad_len,
          uint8_t tag[kTagBytes]);
bool verify(const SessionKey& k, bool from_initiator, uint64_t pn, const uint8_t* ad, size_t ad_len,
            const uint8_t tag[kTagBytes]);

}  // namespace netapprox::atp::crypto
