// Per-packet authentication: ChaCha20-Poly1305 (IETF, libsodium) with an empty plaintext and the whole packet
// (header + body) as associated data. The nonce is direction || packet number, unique per key and direction
// because packet numbers never repeat within a session.
#pragma once

#include <cstddef>
#include <cstdint>

namespace netapprox::atp::crypto {

constexpr size_t kKeyBytes = 32;
constexpr size_t kTagBytes = 16;

bool init();  // idempotent; false if libsodium cannot initialise
void seal(const uint8_t key[kKeyBytes], bool from_initiator, uint64_t pn, const uint8_t* ad, size_t ad_len,
          uint8_t tag[kTagBytes]);
bool verify(const uint8_t key[kKeyBytes], bool from_initiator, uint64_t pn, const uint8_t* ad, size_t ad_len,
            const uint8_t tag[kTagBytes]);

}  // namespace netapprox::atp::crypto
