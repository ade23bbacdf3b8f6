#include "core/crypto.hpp"

#include <sodium.h>

#include <cstring>

#include "core/wire.hpp"

namespace netapprox::atp::crypto {

static_assert(crypto_aead_chacha20poly1305_IETF_KEYBYTES == kKeyBytes);
static_assert(crypto_aead_chacha20poly1305_IETF_ABYTES == kTagBytes);
static_assert(crypto_aead_chacha20poly1305_IETF_NPUBBYTES == 12);
static_assert(crypto_aead_aes256gcm_KEYBYTES == kKeyBytes);
static_assert(crypto_aead_aes256gcm_ABYTES == kTagBytes);
static_assert(crypto_aead_aes256gcm_NPUBBYTES == 12);

bool init() { return sodium_init() >= 0; }

bool aes_available() {
  static const bool available = init() && crypto_aead_aes256gcm_is_available() == 1;
  return available;
}

static void make_nonce(bool from_initiator, uint64_t pn, unsigned char nonce[12]) {
  nonce[0] = nonce[1] = nonce[2] = 0;
  nonce[3] = from_initiator ? 1 : 2;
  for (int i = 0; i < 8; ++i) nonce[4 + i] = static_cast<unsigned char>(pn >> (56 - 8 * i));
}

static bool uses_aes(const uint8_t* ad, size_t ad_len) { return ad_len > 4 && (ad[4] & wire::kFlagAesGcm) != 0; }

static_assert(crypto_kdf_KEYBYTES == kKeyBytes);
static void aes_subkey(const uint8_t key[kKeyBytes], uint8_t out[kKeyBytes]) {
  crypto_kdf_derive_from_key(out, kKeyBytes, 1, "NA-AESGC", key);
}

void seal(const uint8_t key[kKeyBytes], bool from_initiator, uint64_t pn, const uint8_t* ad, size_t ad_len,
          uint8_t tag[kTagBytes]) {
  unsigned char nonce[12];
  make_nonce(from_initiator, pn, nonce);
  unsigned long long tag_len = 0;
  unsigned char none = 0;
  if (uses_aes(ad, ad_len) && aes_available()) {
    uint8_t sub[kKeyBytes];
    aes_subkey(key, sub);
    crypto_aead_aes256gcm_encrypt_detached(&none, tag, &tag_len, &none, 0, ad, ad_len, nullptr, nonce, sub);
    sodium_memzero(sub, sizeof sub);
  } else {
    crypto_aead_chacha20poly1305_ietf_encrypt_detached(&none, tag, &tag_len, &none, 0, ad, ad_len, nullptr, nonce, key);
  }
}

bool verify(const uint8_t key[kKeyBytes], bool from_initiator, uint64_t pn, const uint8_t* ad, size_t ad_len,
            const uint8_t tag[kTagBytes]) {
  unsigned char nonce[12];
  make_nonce(from_initiator, pn, nonce);
  unsigned char none = 0;
  if (uses_aes(ad, ad_len)) {
    if (!aes_available()) return false;  // the peer chose AES-GCM and this CPU cannot check it
    uint8_t sub[kKeyBytes];
    aes_subkey(key, sub);
    const bool ok = crypto_aead_aes256gcm_decrypt_detached(&none, nullptr, &none, 0, tag, ad, ad_len, nonce, sub) == 0;
    sodium_memzero(sub, sizeof sub);
    return ok;
  }
  return crypto_aead_chacha20poly1305_ietf_decrypt_detached(&none, nullptr, &none, 0, tag, ad, ad_len, nonce, key) == 0;
}

static_assert(crypto_generichash_KEYBYTES_MAX >= kKeyBytes);
void derive_session(const uint8_t master[kKeyBytes], const uint8_t initiator_nonce[kSessionNonceBytes],
                    const uint8_t responder_nonce[kSessionNonceBytes], SessionSecrets* out) {
  static const char kLabel[] = "netapprox/atp/session/v1";
  uint8_t derived[kKeyBytes + 8];
  crypto_generichash_state st;
  crypto_generichash_init(&st, master, kKeyBytes, sizeof derived);
  crypto_generichash_update(&st, reinterpret_cast<const uint8_t*>(kLabel), sizeof kLabel);
  crypto_generichash_update(&st, initiator_nonce, kSessionNonceBytes);
  crypto_generichash_update(&st, responder_nonce, kSessionNonceBytes);
  crypto_generichash_final(&st, derived, sizeof derived);
  std::memcpy(out->key, derived, kKeyBytes);
  uint64_t id = 0;
  for (int i = 0; i < 8; ++i) id = (id << 8) | derived[kKeyBytes + i];
  out->session_id = id ? id : 1;
  sodium_memzero(derived, sizeof derived);
  sodium_memzero(&st, sizeof st);
}

static_assert(sizeof(crypto_aead_aes256gcm_state) <= sizeof(SessionKey::aes_state));

void prepare(SessionKey* k, const uint8_t key[kKeyBytes]) {
  std::memcpy(k->key, key, kKeyBytes);
  k->aes_ready = aes_available();
  if (k->aes_ready) {
    uint8_t sub[kKeyBytes];
    aes_subkey(key, sub);
    crypto_aead_aes256gcm_beforenm(reinterpret_cast<crypto_aead_aes256gcm_state*>(k->aes_state), sub);
    sodium_memzero(sub, sizeof sub);
  }
}

SessionKey::~SessionKey() {
  sodium_memzero(key, sizeof key);
  sodium_memzero(aes_state, sizeof aes_state);
}

void seal(const SessionKey& k, bool from_initiator, uint64_t pn, const uint8_t* ad, size_t ad_len,
          uint8_t tag[kTagBytes]) {
  if (!(uses_aes(ad, ad_len) && k.aes_ready)) return seal(k.key, from_initiator, pn, ad, ad_len, tag);
  unsigned char nonce[12];
  make_nonce(from_initiator, pn, nonce);
  unsigned long long tag_len = 0;
  unsigned char none = 0;
  crypto_aead_aes256gcm_encrypt_detached_afternm(&none, tag, &tag_len, &none, 0, ad, ad_len, nullptr, nonce,
                                                 reinterpret_cast<const crypto_aead_aes256gcm_state*>(k.aes_state));
}

bool verify(const SessionKey& k, bool from_initiator, uint64_t pn, const uint8_t* ad, size_t ad_len,
            const uint8_t tag[kTagBytes]) {
  if (!(uses_aes(ad, ad_len) && k.aes_ready)) return verify(k.key, from_initiator, pn, ad, ad_len, tag);
  unsigned char nonce[12];
  make_nonce(from_initiator, pn, nonce);
  unsigned char none = 0;
  return crypto_aead_aes256gcm_decrypt_detached_afternm(
             &none, nullptr, &none, 0, tag, ad, ad_len, nonce,
             reinterpret_cast<const crypto_aead_aes256gcm_state*>(k.aes_state)) == 0;
}

}  // namespace netapprox::atp::crypto
