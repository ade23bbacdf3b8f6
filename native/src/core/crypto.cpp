#include "core/crypto.hpp"

#include <sodium.h>

namespace netapprox::atp::crypto {

static_assert(crypto_aead_chacha20poly1305_IETF_KEYBYTES == kKeyBytes);
static_assert(crypto_aead_chacha20poly1305_IETF_ABYTES == kTagBytes);
static_assert(crypto_aead_chacha20poly1305_IETF_NPUBBYTES == 12);

bool init() { return sodium_init() >= 0; }

static void make_nonce(bool from_initiator, uint64_t pn, unsigned char nonce[12]) {
  nonce[0] = nonce[1] = nonce[2] = 0;
  nonce[3] = from_initiator ? 1 : 2;
  for (int i = 0; i < 8; ++i) nonce[4 + i] = static_cast<unsigned char>(pn >> (56 - 8 * i));
}

void seal(const uint8_t key[kKeyBytes], bool from_initiator, uint64_t pn, const uint8_t* ad, size_t ad_len,
          uint8_t tag[kTagBytes]) {
  unsigned char nonce[12];
  make_nonce(from_initiator, pn, nonce);
  unsigned long long tag_len = 0;
  unsigned char none = 0;
  crypto_aead_chacha20poly1305_ietf_encrypt_detached(&none, tag, &tag_len, &none, 0, ad, ad_len, nullptr, nonce,
                                                     key);
}

bool verify(const uint8_t key[kKeyBytes], bool from_initiator, uint64_t pn, const uint8_t* ad, size_t ad_len,
            const uint8_t tag[kTagBytes]) {
  unsigned char nonce[12];
  make_nonce(from_initiator, pn, nonce);
  unsigned char none = 0;
  return crypto_aead_chacha20poly1305_ietf_decrypt_detached(&none, nullptr, &none, 0, tag, ad, ad_len, nonce,
                                                            key) == 0;
}

}  // namespace netapprox::atp::crypto
