// JNI binding of the C API (include/netapprox/netapprox.h) for approx-core's io.netapprox.core.engine package.
//
// Design (see docs/java-api.md):
//  * No Java_* symbols: every native method is bound in JNI_OnLoad with RegisterNatives, so shading/relocating the
//    Java package cannot break symbol lookup. The Java package is taken from the library's own file name when the
//    loader extracted it as "libnetapprox@<java.package>@<random>.so" (what NativeLibrary does), else the default
//    below. The class names live in exactly one table (kNativeClass).
//  * Handles cross as jlong; the C API validates them (registry), so stale/closed handles return
//    NA_ERR_CLOSED_HANDLE and Java turns that into IllegalStateException - never a dereference of freed memory.
//  * Status codes are returned as ints; this file throws nothing except the JVM's own OutOfMemoryError.
//  * Hot paths take raw addresses (from direct ByteBuffers / Netty memoryAddress) and are batched: one crossing
//    submits many messages (submitBatch) or drains many events into a caller-provided direct buffer (pollEvents).
#include <dlfcn.h>
#include <malloc.h>
#include <jni.h>
#include <time.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "netapprox/netapprox.h"

namespace {

// ---- the single place naming Java classes -------------------------------------------------------------------
constexpr const char* kDefaultPackage = "io/netapprox/core/engine/";
constexpr const char* kNativeClass = "NativeEngine";

// ---- record layouts shared with NativeEngine.java (checked at load time through layoutInfo()) -----------------
// Event record (little-endian, native order), kEventRecordBytes each:
//   0 int type | 4 int status | 8 long session | 16 int job | 20 int message | 24 long groupId | 32 long data
//   40 long len | 48 long handle | 56 long report | 64 long epochAtNs | 72 double tlr | 80 double loss
//   88 double rateBps | 96 int priorityClass | 100 int reserved
constexpr int kEventRecordBytes = 104;
// Submit descriptor, kSubmitRecordBytes each:
//   0 int groupIndex | 4 int index | 8 long address | 16 int length | 20 int status (written back)
constexpr int kSubmitRecordBytes = 24;
constexpr int kConfigLongs = 28;
constexpr int kConfigDoubles = 4;
constexpr int kReportInfoLongs = 24;
constexpr int kGroupInfoLongs = 8;
constexpr int kStatsLongs = 33;

inline na_engine* E(jlong h) { return reinterpret_cast<na_engine*>(static_cast<uintptr_t>(h)); }
inline na_report* R(jlong h) { return reinterpret_cast<na_report*>(static_cast<uintptr_t>(h)); }

template <typename T>
inline void put(uint8_t* base, int off, T v) {
  std::memcpy(base + off, &v, sizeof v);
}
template <typename T>
inline T get(const uint8_t* base, int off) {
  T v;
  std::memcpy(&v, base + off, sizeof v);
  return v;
}

// ---- config ---------------------------------------------------------------------------------------------------
void config_to_arrays(const na_config& c, jlong* l, jdouble* d, jbyte* dscp) {
  int i = 0;
  l[i++] = static_cast<jlong>(c.line_rate_bps);
  l[i++] = c.max_datagram;
  l[i++] = static_cast<jlong>(c.initial_rtt_ns);
  l[i++] = static_cast<jlong>(c.min_epoch_ns);
  l[i++] = static_cast<jlong>(c.ack_delay_ns);
  l[i++] = c.ack_every;
  l[i++] = static_cast<jlong>(c.idle_timeout_ns);
  l[i++] = static_cast<jlong>(c.peer_death_timeout_ns);
  l[i++] = static_cast<jlong>(c.recv_buffer_bytes);
  l[i++] = static_cast<jlong>(c.send_buffer_bytes);
  l[i++] = c.max_message_bytes;
  l[i++] = c.max_sessions;
  l[i++] = c.max_jobs_per_session;
  l[i++] = c.max_messages_per_job;
  l[i++] = c.max_groups_per_job;
  l[i++] = c.max_pending_events;
  l[i++] = c.no_priority_dscp;
  l[i++] = c.mode;
  l[i++] = static_cast<jlong>(c.fault_seed);
  l[i++] = c.bind_port;
  l[i++] = c.enable_gso;
  l[i++] = c.enable_gro;
  l[i++] = c.socket_buffer_bytes;
  l[i++] = c.event_queue_capacity;
  l[i++] = c.max_peers;
  l[i++] = c.trace_epochs;
  l[i++] = c.payload_auth;
  l[i++] = c.prefer_aes_gcm;
  d[0] = c.reaction_speed;
  d[1] = c.tlr_floor;
  d[2] = c.fault_drop_outgoing;
  d[3] = c.fault_drop_incoming;
  for (int k = 0; k < 8; ++k) dscp[k] = static_cast<jbyte>(c.dscp_by_class[k]);
}

// Values were validated in Java (AtpConfig); the engine validates again and reports through errbuf.
void arrays_to_config(const jlong* l, const jdouble* d, const jbyte* dscp, na_config* c) {
  int i = 0;
  c->line_rate_bps = static_cast<uint64_t>(l[i++]);
  c->max_datagram = static_cast<uint32_t>(l[i++]);
  c->initial_rtt_ns = static_cast<uint64_t>(l[i++]);
  c->min_epoch_ns = static_cast<uint64_t>(l[i++]);
  c->ack_delay_ns = static_cast<uint64_t>(l[i++]);
  c->ack_every = static_cast<uint32_t>(l[i++]);
  c->idle_timeout_ns = static_cast<uint64_t>(l[i++]);
  c->peer_death_timeout_ns = static_cast<uint64_t>(l[i++]);
  c->recv_buffer_bytes = static_cast<uint64_t>(l[i++]);
  c->send_buffer_bytes = static_cast<uint64_t>(l[i++]);
  c->max_message_bytes = static_cast<uint32_t>(l[i++]);
  c->max_sessions = static_cast<uint32_t>(l[i++]);
  c->max_jobs_per_session = static_cast<uint32_t>(l[i++]);
  c->max_messages_per_job = static_cast<uint32_t>(l[i++]);
  c->max_groups_per_job = static_cast<uint32_t>(l[i++]);
  c->max_pending_events = static_cast<uint32_t>(l[i++]);
  c->no_priority_dscp = static_cast<uint8_t>(l[i++]);
  c->mode = static_cast<int32_t>(l[i++]);
  c->fault_seed = static_cast<uint64_t>(l[i++]);
  c->bind_port = static_cast<uint16_t>(l[i++]);
  c->enable_gso = static_cast<int32_t>(l[i++]);
  c->enable_gro = static_cast<int32_t>(l[i++]);
  c->socket_buffer_bytes = static_cast<int32_t>(l[i++]);
  c->event_queue_capacity = static_cast<uint32_t>(l[i++]);
  c->max_peers = static_cast<uint32_t>(l[i++]);
  c->trace_epochs = static_cast<int32_t>(l[i++]);
  c->payload_auth = static_cast<int32_t>(l[i++]);
  c->prefer_aes_gcm = static_cast<int32_t>(l[i++]);
  c->reaction_speed = d[0];
  c->tlr_floor = d[1];
  c->fault_drop_outgoing = d[2];
  c->fault_drop_incoming = d[3];
  for (int k = 0; k < 8; ++k) c->dscp_by_class[k] = static_cast<uint8_t>(dscp[k]);
}

bool array_len_at_least(JNIEnv* env, jarray a, jsize n) { return a != nullptr && env->GetArrayLength(a) >= n; }

// ---- natives --------------------------------------------------------------------------------------------------
jintArray JNICALL layoutInfo(JNIEnv* env, jclass) {
  const jint v[] = {kEventRecordBytes, kSubmitRecordBytes, kConfigLongs,  kConfigDoubles,
                    kReportInfoLongs,  kGroupInfoLongs,    kStatsLongs,   static_cast<jint>(sizeof(void*))};
  jintArray out = env->NewIntArray(sizeof v / sizeof v[0]);
  if (out) env->SetIntArrayRegion(out, 0, sizeof v / sizeof v[0], v);
  return out;
}

jstring JNICALL version(JNIEnv* env, jclass) { return env->NewStringUTF(na_version()); }
jstring JNICALL strerror_(JNIEnv* env, jclass, jint code) { return env->NewStringUTF(na_strerror(code)); }

jint JNICALL configDefaults(JNIEnv* env, jclass, jlongArray longs, jdoubleArray doubles, jbyteArray dscp) {
  if (!array_len_at_least(env, longs, kConfigLongs) || !array_len_at_least(env, doubles, kConfigDoubles) ||
      !array_len_at_least(env, dscp, 8))
    return NA_ERR_INVALID_ARGUMENT;
  na_config c;
  int rc = na_config_init(&c);
  if (rc != NA_OK) return rc;
  jlong l[kConfigLongs];
  jdouble d[kConfigDoubles];
  jbyte b[8];
  config_to_arrays(c, l, d, b);
  env->SetLongArrayRegion(longs, 0, kConfigLongs, l);
  env->SetDoubleArrayRegion(doubles, 0, kConfigDoubles, d);
  env->SetByteArrayRegion(dscp, 0, 8, b);
  return NA_OK;
}

// Returns the engine handle (> 0) or a negative NA_ERR_* code; on failure errOut[0] holds the engine's message.
jlong JNICALL engineOpen(JNIEnv* env, jclass, jlongArray longs, jdoubleArray doubles, jbyteArray dscp,
                         jstring bindAddress, jobjectArray errOut) {
  if (!array_len_at_least(env, longs, kConfigLongs) || !array_len_at_least(env, doubles, kConfigDoubles) ||
      !array_len_at_least(env, dscp, 8) || bindAddress == nullptr)
    return NA_ERR_INVALID_ARGUMENT;
  na_config c;
  int rc = na_config_init(&c);
  if (rc != NA_OK) return rc;
  jlong l[kConfigLongs];
  jdouble d[kConfigDoubles];
  jbyte b[8];
  env->GetLongArrayRegion(longs, 0, kConfigLongs, l);
  env->GetDoubleArrayRegion(doubles, 0, kConfigDoubles, d);
  env->GetByteArrayRegion(dscp, 0, 8, b);
  arrays_to_config(l, d, b, &c);
  const char* bind = env->GetStringUTFChars(bindAddress, nullptr);
  if (!bind) return NA_ERR_INTERNAL;  // OutOfMemoryError pending
  const size_t blen = std::strlen(bind);
  if (blen >= sizeof c.bind_address) {
    env->ReleaseStringUTFChars(bindAddress, bind);
    return NA_ERR_INVALID_ARGUMENT;
  }
  std::memcpy(c.bind_address, bind, blen + 1);
  env->ReleaseStringUTFChars(bindAddress, bind);
  na_engine* eng = nullptr;
  char err[256] = {0};
  rc = na_engine_open(&c, &eng, err, sizeof err);
  if (rc != NA_OK) {
    if (errOut != nullptr && env->GetArrayLength(errOut) > 0) {
      jstring msg = env->NewStringUTF(err);
      if (msg) env->SetObjectArrayElement(errOut, 0, msg);
    }
    return rc;
  }
  return static_cast<jlong>(reinterpret_cast<uintptr_t>(eng));
}

jint JNICALL engineClose(JNIEnv*, jclass, jlong h) { return na_engine_close(E(h)); }
jint JNICALL localPort(JNIEnv*, jclass, jlong h) { return na_engine_local_port(E(h)); }

jint JNICALL sessionOpen(JNIEnv* env, jclass, jlong h, jlong sid, jbyteArray key, jstring host, jint port,
                         jboolean initiator) {
  if (!array_len_at_least(env, key, 32) || host == nullptr || port < 0 || port > 65535)
    return NA_ERR_INVALID_ARGUMENT;
  uint8_t k[32];
  env->GetByteArrayRegion(key, 0, 32, reinterpret_cast<jbyte*>(k));
  const char* hs = env->GetStringUTFChars(host, nullptr);
  if (!hs) return NA_ERR_INTERNAL;
  int rc = na_session_open(E(h), static_cast<uint64_t>(sid), k, hs, static_cast<uint16_t>(port), initiator ? 1 : 0);
  env->ReleaseStringUTFChars(host, hs);
  std::memset(k, 0, sizeof k);
  return rc;
}

jint JNICALL sessionSetPeer(JNIEnv* env, jclass, jlong h, jlong sid, jstring host, jint port) {
  if (host == nullptr || port < 0 || port > 65535) return NA_ERR_INVALID_ARGUMENT;
  const char* hs = env->GetStringUTFChars(host, nullptr);
  if (!hs) return NA_ERR_INTERNAL;
  int rc = na_session_set_peer(E(h), static_cast<uint64_t>(sid), hs, static_cast<uint16_t>(port));
  env->ReleaseStringUTFChars(host, hs);
  return rc;
}

jint JNICALL sessionClose(JNIEnv*, jclass, jlong h, jlong sid) {
  return na_session_close(E(h), static_cast<uint64_t>(sid));
}

jint JNICALL jobStart(JNIEnv* env, jclass, jlong h, jlong sid, jint job, jlongArray groupIds, jintArray sizes,
                      jdoubleArray msrs, jint n, jboolean mrdf) {
  if (n <= 0 || !array_len_at_least(env, groupIds, n) || !array_len_at_least(env, sizes, n) ||
      !array_len_at_least(env, msrs, n))
    return NA_ERR_INVALID_ARGUMENT;
  std::vector<jlong> ids(n);
  std::vector<jint> sz(n);
  std::vector<jdouble> m(n);
  env->GetLongArrayRegion(groupIds, 0, n, ids.data());
  env->GetIntArrayRegion(sizes, 0, n, sz.data());
  env->GetDoubleArrayRegion(msrs, 0, n, m.data());
  std::vector<na_group_spec> g(n);
  for (jint i = 0; i < n; ++i) {
    if (sz[i] <= 0) return NA_ERR_INVALID_ARGUMENT;
    g[i].group_id = static_cast<uint64_t>(ids[i]);
    g[i].size = static_cast<uint32_t>(sz[i]);
    g[i].msr = m[i];
  }
  return na_job_start(E(h), static_cast<uint64_t>(sid), static_cast<uint32_t>(job), g.data(), g.size(),
                      mrdf ? 1 : 0);
}

// Hot path: raw address (a Netty ByteBuf's memoryAddress or a direct ByteBuffer's address). timeoutMs == 0:
// non-blocking na_job_submit; otherwise na_job_submit_wait (< 0 forever).
jint JNICALL submitAddress(JNIEnv*, jclass, jlong h, jlong sid, jint job, jint group, jint index, jlong address,
                           jint len, jint timeoutMs) {
  if (len <= 0 || address == 0) return NA_ERR_INVALID_ARGUMENT;
  const void* p = reinterpret_cast<const void*>(static_cast<uintptr_t>(address));
  if (timeoutMs == 0)
    return na_job_submit(E(h), static_cast<uint64_t>(sid), static_cast<uint32_t>(job), static_cast<uint32_t>(group),
                         static_cast<uint32_t>(index), p, static_cast<size_t>(len));
  return na_job_submit_wait(E(h), static_cast<uint64_t>(sid), static_cast<uint32_t>(job),
                            static_cast<uint32_t>(group), static_cast<uint32_t>(index), p,
                            static_cast<size_t>(len), timeoutMs);
}

// Same for a direct ByteBuffer (address looked up here, bounds checked against its capacity).
jint JNICALL submitBuffer(JNIEnv* env, jclass, jlong h, jlong sid, jint job, jint group, jint index, jobject buf,
                          jint offset, jint len, jint timeoutMs) {
  if (buf == nullptr || offset < 0 || len <= 0) return NA_ERR_INVALID_ARGUMENT;
  auto* base = static_cast<uint8_t*>(env->GetDirectBufferAddress(buf));
  const jlong cap = env->GetDirectBufferCapacity(buf);
  if (base == nullptr || cap < 0 || static_cast<jlong>(offset) + len > cap) return NA_ERR_INVALID_ARGUMENT;
  return submitAddress(env, nullptr, h, sid, job, group, index,
                       static_cast<jlong>(reinterpret_cast<uintptr_t>(base + offset)), len, timeoutMs);
}

// Batched submit: `count` descriptors (kSubmitRecordBytes each) at descAddress. Submits them in order, each
// waiting for buffer space until the shared deadline (timeoutMs: 0 = never wait, < 0 = forever). Returns how many
// were accepted; the status of the first descriptor not accepted is written into its status field (and every
// accepted descriptor's status is NA_OK). A negative return is an error before anything was tried.
jint JNICALL submitBatch(JNIEnv*, jclass, jlong h, jlong sid, jint job, jlong descAddress, jint count,
                         jint timeoutMs) {
  if (descAddress == 0 || count < 0) return NA_ERR_INVALID_ARGUMENT;
  auto* d = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(descAddress));
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  const int64_t start_ms = int64_t(t0.tv_sec) * 1000 + t0.tv_nsec / 1000000;
  for (jint i = 0; i < count; ++i) {
    uint8_t* r = d + static_cast<ptrdiff_t>(i) * kSubmitRecordBytes;
    const int32_t group = get<int32_t>(r, 0), index = get<int32_t>(r, 4), len = get<int32_t>(r, 16);
    const uint64_t addr = get<uint64_t>(r, 8);
    int rc;
    if (len <= 0 || addr == 0 || group < 0 || index < 0) {
      rc = NA_ERR_INVALID_ARGUMENT;
    } else {
      const void* p = reinterpret_cast<const void*>(static_cast<uintptr_t>(addr));
      rc = na_job_submit(E(h), static_cast<uint64_t>(sid), static_cast<uint32_t>(job), static_cast<uint32_t>(group),
                         static_cast<uint32_t>(index), p, static_cast<size_t>(len));
      if (rc == NA_ERR_WOULD_BLOCK && timeoutMs != 0) {
        int wait = -1;
        if (timeoutMs > 0) {
          struct timespec t;
          clock_gettime(CLOCK_MONOTONIC, &t);
          const int64_t now_ms = int64_t(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
          const int64_t left = int64_t(timeoutMs) - (now_ms - start_ms);
          wait = left > 0 ? static_cast<int>(left) : 0;
        }
        if (wait != 0)
          rc = na_job_submit_wait(E(h), static_cast<uint64_t>(sid), static_cast<uint32_t>(job),
                                  static_cast<uint32_t>(group), static_cast<uint32_t>(index), p,
                                  static_cast<size_t>(len), wait);
      }
    }
    put<int32_t>(r, 20, rc);
    if (rc != NA_OK) return i;
  }
  return count;
}

jint JNICALL jobUpdateMsr(JNIEnv* env, jclass, jlong h, jlong sid, jint job, jintArray groups, jdoubleArray msrs,
                          jint n) {
  if (n <= 0 || !array_len_at_least(env, groups, n) || !array_len_at_least(env, msrs, n))
    return NA_ERR_INVALID_ARGUMENT;
  std::vector<jint> g(n);
  std::vector<jdouble> m(n);
  env->GetIntArrayRegion(groups, 0, n, g.data());
  env->GetDoubleArrayRegion(msrs, 0, n, m.data());
  std::vector<uint32_t> gi(n);
  for (jint i = 0; i < n; ++i) {
    if (g[i] < 0) return NA_ERR_INVALID_ARGUMENT;
    gi[i] = static_cast<uint32_t>(g[i]);
  }
  return na_job_update_msr(E(h), static_cast<uint64_t>(sid), static_cast<uint32_t>(job), gi.data(), m.data(),
                           static_cast<size_t>(n));
}

jint JNICALL jobCancel(JNIEnv*, jclass, jlong h, jlong sid, jint job) {
  return na_job_cancel(E(h), static_cast<uint64_t>(sid), static_cast<uint32_t>(job));
}

// Drains up to `max` events into the direct buffer `out` (kEventRecordBytes each, capacity checked). A MESSAGE
// record carries the address and length of the message in the engine's memory (valid until na_message_release);
// Java reads it in place through a recycled ByteBuf, so no Java object is created here (allocation-free receive
// path). Returns the number of events, 0 on timeout, or a negative error (NA_ERR_CLOSED / NA_ERR_CLOSED_HANDLE once
// the engine is closed).
jint JNICALL pollEvents(JNIEnv* env, jclass, jlong h, jobject out, jint max, jint timeoutMs) {
  if (out == nullptr || max <= 0) return NA_ERR_INVALID_ARGUMENT;
  auto* base = static_cast<uint8_t*>(env->GetDirectBufferAddress(out));
  const jlong cap = env->GetDirectBufferCapacity(out);
  if (base == nullptr || cap < static_cast<jlong>(max) * kEventRecordBytes) return NA_ERR_BUFFER_TOO_SMALL;
  if (max > 1024) max = 1024;
  thread_local std::vector<na_event> evs;
  if (evs.size() < static_cast<size_t>(max)) evs.resize(static_cast<size_t>(max));
  const int n = na_poll_events(E(h), evs.data(), max, timeoutMs);
  if (n <= 0) return n;
  for (int i = 0; i < n; ++i) {
    const na_event& e = evs[static_cast<size_t>(i)];
    uint8_t* r = base + static_cast<ptrdiff_t>(i) * kEventRecordBytes;
    put<int32_t>(r, 0, e.type);
    put<int32_t>(r, 4, e.status);
    put<uint64_t>(r, 8, e.session);
    put<uint32_t>(r, 16, e.job);
    put<uint32_t>(r, 20, e.message);
    put<uint64_t>(r, 24, e.group_id);
    put<uint64_t>(r, 32, reinterpret_cast<uintptr_t>(e.data));
    put<uint64_t>(r, 40, static_cast<uint64_t>(e.len));
    put<uint64_t>(r, 48, e.handle);
    put<uint64_t>(r, 56, reinterpret_cast<uintptr_t>(e.report));
    put<uint64_t>(r, 64, e.epoch_at_ns);
    put<double>(r, 72, e.epoch_tlr);
    put<double>(r, 80, e.epoch_loss);
    put<double>(r, 88, e.epoch_rate_bps);
    put<int32_t>(r, 96, e.epoch_priority_class);
    put<int32_t>(r, 100, 0);
  }
  return n;
}

jint JNICALL messageRelease(JNIEnv*, jclass, jlong h, jlong handle) {
  return na_message_release(E(h), static_cast<uint64_t>(handle));
}

jobject JNICALL wrapAddress(JNIEnv* env, jclass, jlong address, jlong len) {
  if (address == 0 || len < 0) return nullptr;
  return env->NewDirectByteBuffer(reinterpret_cast<void*>(static_cast<uintptr_t>(address)), len);
}

jlong JNICALL directAddress(JNIEnv* env, jclass, jobject buf) {
  if (buf == nullptr) return 0;
  return static_cast<jlong>(reinterpret_cast<uintptr_t>(env->GetDirectBufferAddress(buf)));
}

jint JNICALL reportInfo(JNIEnv* env, jclass, jlong r, jlongArray out) {
  if (!array_len_at_least(env, out, kReportInfoLongs)) return NA_ERR_INVALID_ARGUMENT;
  na_report_info i;
  int rc = na_report_get_info(R(r), &i);
  if (rc != NA_OK) return rc;
  jlong v[kReportInfoLongs];
  int k = 0;
  v[k++] = static_cast<jlong>(i.session);
  v[k++] = i.job;
  v[k++] = i.is_sender;
  v[k++] = i.status;
  v[k++] = i.messages;
  v[k++] = i.delivered;
  v[k++] = i.lost;
  std::memcpy(&v[k++], &i.measured_loss, sizeof(double));
  v[k++] = static_cast<jlong>(i.packets_sent);
  v[k++] = static_cast<jlong>(i.packets_retransmitted);
  v[k++] = static_cast<jlong>(i.bytes_sent);
  v[k++] = static_cast<jlong>(i.epochs);
  v[k++] = static_cast<jlong>(i.started_ns);
  v[k++] = static_cast<jlong>(i.finished_ns);
  v[k++] = static_cast<jlong>(i.jct_ns);
  for (int c = 0; c < 8; ++c) v[k++] = static_cast<jlong>(i.time_in_class_ns[c]);
  v[k++] = i.n_groups;
  env->SetLongArrayRegion(out, 0, kReportInfoLongs, v);
  return NA_OK;
}

jint JNICALL reportGroup(JNIEnv* env, jclass, jlong r, jint index, jlongArray out) {
  if (index < 0 || !array_len_at_least(env, out, kGroupInfoLongs)) return NA_ERR_INVALID_ARGUMENT;
  na_group_report g;
  int rc = na_report_get_group(R(r), static_cast<uint32_t>(index), &g);
  if (rc != NA_OK) return rc;
  const jlong v[kGroupInfoLongs] = {static_cast<jlong>(g.group_id), g.size, g.target, g.delivered, g.lost,
                                    g.target_unreachable, g.n_delivered_ids, g.n_lost_ids};
  env->SetLongArrayRegion(out, 0, kGroupInfoLongs, v);
  return NA_OK;
}

jint JNICALL reportGroupIds(JNIEnv* env, jclass, jlong r, jint index, jintArray delivered, jintArray lost) {
  if (index < 0) return NA_ERR_INVALID_ARGUMENT;
  na_group_report g;
  int rc = na_report_get_group(R(r), static_cast<uint32_t>(index), &g);
  if (rc != NA_OK) return rc;
  if (g.n_delivered_ids > 0) {
    if (!array_len_at_least(env, delivered, static_cast<jsize>(g.n_delivered_ids))) return NA_ERR_BUFFER_TOO_SMALL;
    env->SetIntArrayRegion(delivered, 0, static_cast<jsize>(g.n_delivered_ids),
                           reinterpret_cast<const jint*>(g.delivered_ids));
  }
  if (g.n_lost_ids > 0) {
    if (!array_len_at_least(env, lost, static_cast<jsize>(g.n_lost_ids))) return NA_ERR_BUFFER_TOO_SMALL;
    env->SetIntArrayRegion(lost, 0, static_cast<jsize>(g.n_lost_ids), reinterpret_cast<const jint*>(g.lost_ids));
  }
  return NA_OK;
}

jint JNICALL reportFree(JNIEnv*, jclass, jlong r) { return na_report_free(R(r)); }

jint JNICALL engineStats(JNIEnv* env, jclass, jlong h, jlongArray out) {
  if (!array_len_at_least(env, out, kStatsLongs)) return NA_ERR_INVALID_ARGUMENT;
  na_stats s;
  int rc = na_engine_stats(E(h), &s);
  if (rc != NA_OK) return rc;
  const uint64_t v[kStatsLongs] = {
      s.datagrams_in,        s.datagrams_out,         s.bytes_in,          s.bytes_out,
      s.dropped_malformed,   s.dropped_unknown_session, s.dropped_auth,    s.dropped_replay_or_old,
      s.dropped_no_buffer,   s.dropped_unknown_job,   s.dropped_fault_in,  s.dropped_fault_out,
      s.events_dropped,      s.sessions,              s.jobs,              s.recv_syscalls,
      s.send_syscalls,       s.udp_datagrams_received, s.udp_datagrams_sent, s.gro_buffers,
      s.gso_sends,           s.send_errors,           s.send_eagain,       s.recv_errors,
      s.recv_truncated,      s.peer_evictions,        s.unknown_peer_transmits, s.wakeups,
      s.loop_iterations,     static_cast<uint64_t>(s.gso_enabled), static_cast<uint64_t>(s.gro_enabled), 0, 0};
  jlong j[kStatsLongs];
  for (int i = 0; i < kStatsLongs; ++i) j[i] = static_cast<jlong>(v[i]);
  env->SetLongArrayRegion(out, 0, kStatsLongs, j);
  return NA_OK;
}

// Bytes currently allocated with malloc in this process (glibc mallinfo2: in-use arena bytes + mmapped chunks).
// A native-memory counter for leak tests; -1 when unavailable.
jlong JNICALL mallocInUse(JNIEnv*, jclass) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  struct mallinfo2 mi = mallinfo2();
  return static_cast<jlong>(mi.uordblks + mi.hblkhd);
#else
  return -1;
#endif
}

#define NM(name, sig, fn) {const_cast<char*>(name), const_cast<char*>(sig), reinterpret_cast<void*>(fn)}
const JNINativeMethod kMethods[] = {
    NM("layoutInfo", "()[I", layoutInfo),
    NM("version", "()Ljava/lang/String;", version),
    NM("strerror", "(I)Ljava/lang/String;", strerror_),
    NM("configDefaults", "([J[D[B)I", configDefaults),
    NM("engineOpen", "([J[D[BLjava/lang/String;[Ljava/lang/String;)J", engineOpen),
    NM("engineClose", "(J)I", engineClose),
    NM("localPort", "(J)I", localPort),
    NM("sessionOpen", "(JJ[BLjava/lang/String;IZ)I", sessionOpen),
    NM("sessionSetPeer", "(JJLjava/lang/String;I)I", sessionSetPeer),
    NM("sessionClose", "(JJ)I", sessionClose),
    NM("jobStart", "(JJI[J[I[DIZ)I", jobStart),
    NM("submitAddress", "(JJIIIJII)I", submitAddress),
    NM("submitBuffer", "(JJIIILjava/nio/ByteBuffer;III)I", submitBuffer),
    NM("submitBatch", "(JJIJII)I", submitBatch),
    NM("jobUpdateMsr", "(JJI[I[DI)I", jobUpdateMsr),
    NM("jobCancel", "(JJI)I", jobCancel),
    NM("pollEvents", "(JLjava/nio/ByteBuffer;II)I", pollEvents),
    NM("messageRelease", "(JJ)I", messageRelease),
    NM("wrapAddress", "(JJ)Ljava/nio/ByteBuffer;", wrapAddress),
    NM("directAddress", "(Ljava/nio/ByteBuffer;)J", directAddress),
    NM("reportInfo", "(J[J)I", reportInfo),
    NM("reportGroup", "(JI[J)I", reportGroup),
    NM("reportGroupIds", "(JI[I[I)I", reportGroupIds),
    NM("reportFree", "(J)I", reportFree),
    NM("engineStats", "(J[J)I", engineStats),
    NM("mallocInUse", "()J", mallocInUse),
};
#undef NM

// The Java package this copy of the library serves: "<pkg>" from "libnetapprox@<pkg>@<random>.so" (dots become
// slashes; only [A-Za-z0-9_$.] accepted), else the default.
std::string java_package() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&java_package), &info) == 0 || info.dli_fname == nullptr) return kDefaultPackage;
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  const std::string file = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t a = file.find('@');
  if (a == std::string::npos) return kDefaultPackage;
  const size_t b = file.find('@', a + 1);
  if (b == std::string::npos || b == a + 1) return kDefaultPackage;
  std::string pkg = file.substr(a + 1, b - a - 1);
  for (char& c : pkg) {
    if (c == '.') {
      c = '/';
    } else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                 c == '$')) {
      return kDefaultPackage;
    }
  }
  return pkg + "/";
}

}  // namespace

extern "C" {

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void*) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_8) != JNI_OK) return JNI_ERR;
  const std::string cls_name = java_package() + kNativeClass;
  jclass cls = env->FindClass(cls_name.c_str());
  if (cls == nullptr) return JNI_ERR;  // NoClassDefFoundError pending: names the class we looked for
  const jint n = static_cast<jint>(sizeof kMethods / sizeof kMethods[0]);
  if (env->RegisterNatives(cls, kMethods, n) != JNI_OK) {
    env->DeleteLocalRef(cls);
    return JNI_ERR;
  }
  env->DeleteLocalRef(cls);
  return JNI_VERSION_1_8;
}

JNIEXPORT void JNICALL JNI_OnUnload(JavaVM*, void*) {
  // Nothing global to free: engines are owned by Java objects (closed explicitly or by their Cleaner).
}

}  // extern "C"
