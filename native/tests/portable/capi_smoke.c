/*
 * A C program against the C API of libnetapprox.so, as the library ships: it is built with the same toolchain as the
 * shipped library (scripts/build-portable-native.sh) and run on each target, the aarch64 one under qemu-user
 * (scripts/test.sh, step "jar contents"); the system build runs it in ctest as well.
 *
 * Two engines on loopback, one session between them, one job of an exact group (multi-datagram messages, every one
 * delivered intact) and an approximate group (small coalesced messages, at least its target delivered), with 5 %
 * of the sender's datagrams dropped so that recovery runs; once with AES-256-GCM preferred and once with
 * ChaCha20-Poly1305. Exit 0 when every check holds; each failed check is printed.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "netapprox/netapprox.h"

#define EXACT_N 64
#define EXACT_LEN 3000 /* > max_datagram: each message spans several datagrams */
#define APPROX_N 200
#define APPROX_LEN 200 /* small: several per datagram */
#define APPROX_MSR 0.5
#define DEADLINE_S 120 /* liveness bound for a run under emulation; a passing run ends long before */

static int failures = 0;

#define CHECK(cond, ...)                                 \
  do {                                                   \
    if (!(cond)) {                                       \
      ++failures;                                        \
      fprintf(stderr, "capi_smoke: FAILED %s: ", #cond); \
      fprintf(stderr, __VA_ARGS__);                      \
      fprintf(stderr, "\n");                             \
    }                                                    \
  } while (0)

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Byte i of message `id`: the receiver recomputes it. */
static uint8_t pattern(uint32_t id, size_t i) { return (uint8_t)(id * 131u + (uint32_t)i * 7u + (uint32_t)(i >> 8)); }

static void fill(uint8_t* buf, uint32_t id, size_t len) {
  for (size_t i = 0; i < len; ++i) buf[i] = pattern(id, i);
}

static na_engine* open_engine(int prefer_aes_gcm, double drop_outgoing) {
  na_config cfg;
  na_engine* e = NULL;
  char err[256] = "";
  if (na_config_init(&cfg) != NA_OK) return NULL;
  snprintf(cfg.bind_address, sizeof cfg.bind_address, "127.0.0.1");
  cfg.prefer_aes_gcm = prefer_aes_gcm;
  cfg.fault_drop_outgoing = drop_outgoing;
  cfg.fault_seed = 34;
  cfg.peer_death_timeout_ns = 60ULL * 1000000000ULL;
  int rc = na_engine_open(&cfg, &e, err, sizeof err);
  CHECK(rc == NA_OK, "na_engine_open: %s (%s)", na_strerror(rc), err);
  return e;
}

/* Receiver events: checks each message's bytes, counts deliveries per id, keeps the report. */
static void drain(na_engine* b, uint8_t* seen, na_report** rrep, int* started) {
  na_event ev[64];
  int n = na_poll_events(b, ev, 64, 5);
  CHECK(n >= 0, "na_poll_events: %s", na_strerror(n));
  for (int i = 0; i < n; ++i) {
    if (ev[i].type == NA_EVENT_JOB_STARTED) *started = 1;
    if (ev[i].type == NA_EVENT_JOB_DONE) *rrep = ev[i].report;
    if (ev[i].type == NA_EVENT_SESSION_ERROR) CHECK(0, "session error %s", na_strerror(ev[i].status));
    if (ev[i].type != NA_EVENT_MESSAGE) continue;
    uint32_t id = ev[i].message;
    CHECK(id < EXACT_N + APPROX_N, "message id %u", id);
    if (id >= EXACT_N + APPROX_N) continue;
    size_t want = id < EXACT_N ? EXACT_LEN : APPROX_LEN;
    CHECK(ev[i].group_id == (id < EXACT_N ? 100u : 200u), "message %u in group %llu", id,
          (unsigned long long)ev[i].group_id);
    CHECK(ev[i].len == want, "message %u has %zu bytes, sent %zu", id, ev[i].len, want);
    if (ev[i].len == want) {
      size_t bad = 0;
      for (size_t k = 0; k < want; ++k) bad += ev[i].data[k] != pattern(id, k);
      CHECK(bad == 0, "message %u: %zu bytes differ", id, bad);
    }
    ++seen[id];
    CHECK(na_message_release(b, ev[i].handle) == NA_OK, "release of message %u", id);
  }
}

static void run(int prefer_aes_gcm) {
  static uint8_t buf[EXACT_LEN];
  uint8_t seen[EXACT_N + APPROX_N];
  memset(seen, 0, sizeof seen);
  na_engine* a = open_engine(prefer_aes_gcm, 0.05);
  na_engine* b = open_engine(prefer_aes_gcm, 0.0);
  if (!a || !b) {
    na_engine_close(a);
    na_engine_close(b);
    return;
  }
  const uint64_t sid = 0x34a64ULL;
  uint8_t key[32];
  for (int i = 0; i < 32; ++i) key[i] = (uint8_t)(i * 5 + 3);
  CHECK(na_session_open(a, sid, key, "127.0.0.1", (uint16_t)na_engine_local_port(b), 1) == NA_OK, "session a");
  CHECK(na_session_open(b, sid, key, "127.0.0.1", (uint16_t)na_engine_local_port(a), 0) == NA_OK, "session b");
  na_group_spec groups[2] = {{100, EXACT_N, 1.0}, {200, APPROX_N, APPROX_MSR}};
  CHECK(na_job_start(a, sid, 7, groups, 2, 1) == NA_OK, "job start");

  na_report* rrep = NULL;
  na_report* srep = NULL;
  int started = 0;
  const double deadline = now_s() + DEADLINE_S;
  for (uint32_t g = 0; g < 2; ++g) {
    for (uint32_t i = 0; i < groups[g].size && now_s() < deadline; ++i) {
      uint32_t id = g == 0 ? i : EXACT_N + i;
      size_t len = g == 0 ? EXACT_LEN : APPROX_LEN;
      fill(buf, id, len);
      int rc;
      while ((rc = na_job_submit_wait(a, sid, 7, g, i, buf, len, 100)) == NA_ERR_WOULD_BLOCK && now_s() < deadline)
        drain(b, seen, &rrep, &started);
      /* The approximate group may end the job once the receiver holds its target (see na_job_submit). */
      if (rc == NA_ERR_NOT_FOUND && g == 1) break;
      CHECK(rc == NA_OK, "submit of group %u message %u: %s", g, i, na_strerror(rc));
    }
  }
  while ((!rrep || !srep) && now_s() < deadline) {
    drain(b, seen, &rrep, &started);
    na_event ev[16];
    int n = na_poll_events(a, ev, 16, 0);
    for (int i = 0; i < n; ++i)
      if (ev[i].type == NA_EVENT_JOB_DONE) srep = ev[i].report;
  }
  CHECK(started, "no JOB_STARTED event");
  CHECK(rrep != NULL && srep != NULL, "no JOB_DONE on %s within %d s", rrep ? "the sender" : "the receiver",
        DEADLINE_S);

  unsigned exact = 0, approx = 0, dup = 0;
  for (uint32_t id = 0; id < EXACT_N + APPROX_N; ++id) {
    if (seen[id] > 1) ++dup;
    if (seen[id] && id < EXACT_N) ++exact;
    if (seen[id] && id >= EXACT_N) ++approx;
  }
  const unsigned target = (unsigned)(APPROX_MSR * APPROX_N + 0.999);
  CHECK(exact == EXACT_N, "exact group: %u of %u messages delivered", exact, EXACT_N);
  CHECK(approx >= target, "approximate group: %u delivered, target %u", approx, target);
  CHECK(dup == 0, "%u messages delivered twice", dup);
  na_report_info info;
  memset(&info, 0, sizeof info);
  if (rrep) {
    CHECK(na_report_get_info(rrep, &info) == NA_OK, "receiver report");
    CHECK(info.status == NA_OK && info.messages == EXACT_N + APPROX_N && info.delivered == exact + approx,
          "receiver report: status %s, %u messages, %u delivered (%u counted here)", na_strerror(info.status),
          info.messages, info.delivered, exact + approx);
  }
  if (srep) {
    CHECK(na_report_get_info(srep, &info) == NA_OK, "sender report");
    CHECK(info.status == NA_OK && info.is_sender == 1, "sender report: status %s", na_strerror(info.status));
  }
  na_stats st;
  memset(&st, 0, sizeof st);
  CHECK(na_engine_stats(a, &st) == NA_OK, "stats");
  CHECK(st.dropped_fault_out > 0 && st.dropped_auth == 0, "sender dropped %llu by fault injection, %llu on auth",
        (unsigned long long)st.dropped_fault_out, (unsigned long long)st.dropped_auth);
  printf(
      "capi_smoke: prefer_aes_gcm=%d: exact %u/%u, approximate %u/%u (target %u), %llu datagrams sent "
      "(%llu retransmitted packets, %llu dropped by fault injection), gso %d gro %d\n",
      prefer_aes_gcm, exact, EXACT_N, approx, APPROX_N, target, (unsigned long long)st.udp_datagrams_sent,
      (unsigned long long)info.packets_retransmitted, (unsigned long long)st.dropped_fault_out, st.gso_enabled,
      st.gro_enabled);
  na_session_close(a, sid);
  CHECK(na_engine_close(a) == NA_OK, "close a");
  CHECK(na_engine_close(b) == NA_OK, "close b");
  na_report_free(rrep);
  na_report_free(srep);
}

int main(void) {
  printf("capi_smoke: libnetapprox %s\n", na_version());
  run(1);
  run(0);
  if (failures) {
    fprintf(stderr, "capi_smoke: %d check(s) failed\n", failures);
    return 1;
  }
  printf("capi_smoke: ok\n");
  return 0;
}
