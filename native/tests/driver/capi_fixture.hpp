// Shared by the C API tests: loopback engines, and a pair of them joined by one session.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>

#include "netapprox/netapprox.h"

namespace capi_fixture {

// An engine config on 127.0.0.1; peer death is a liveness bound that a passing test never reaches.
inline na_config loopback_config(uint64_t peer_death_timeout_ns = 10'000'000'000ULL) {
  na_config cfg;
  EXPECT_EQ(na_config_init(&cfg), NA_OK);
  snprintf(cfg.bind_address, sizeof cfg.bind_address, "127.0.0.1");
  cfg.peer_death_timeout_ns = peer_death_timeout_ns;
  return cfg;
}

inline na_engine* open(const na_config& cfg) {
  na_engine* e = nullptr;
  char err[256];
  EXPECT_EQ(na_engine_open(&cfg, &e, err, sizeof err), NA_OK) << err;
  return e;
}

// Two engines on loopback with one session between them: a sends, b receives. Closed on destruction (a handle
// the test closed already is refused harmlessly); a test checks `a` and `b` for null before using them.
struct Pair {
  na_engine* a = nullptr;
  na_engine* b = nullptr;
  const uint64_t sid;

  Pair(const na_config& sender, const na_config& receiver, uint64_t session_id = 0xba7c400000001ULL) : sid(session_id) {
    a = open(sender);
    b = open(receiver);
    if (!a || !b) return;
    uint8_t key[32];
    for (int i = 0; i < 32; ++i) key[i] = static_cast<uint8_t>(i * 3 + 11);
    EXPECT_EQ(na_session_open(a, sid, key, "127.0.0.1", static_cast<uint16_t>(na_engine_local_port(b)), 1), NA_OK);
    EXPECT_EQ(na_session_open(b, sid, key, "127.0.0.1", static_cast<uint16_t>(na_engine_local_port(a)), 0), NA_OK);
  }
  ~Pair() {
    if (a) na_engine_close(a);
    if (b) na_engine_close(b);
  }
  Pair(const Pair&) = delete;
  Pair& operator=(const Pair&) = delete;
};

}  // namespace capi_fixture
