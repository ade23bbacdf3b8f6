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
#include <jni.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "capi/poll_visit.hpp"
#include "netapprox/netapprox.h"

namespace {

// ---- the single place naming Java classes -------------------------------------------------------------------
constexpr const char* kDefaultPackage = "io/netapprox/core/engine/";
constexpr const char* kNativeClass = "NativeEngine";

// ---- byte records shared with NativeEngine.java (offsets named once; Java checks them through recordFields) -------
// Event record (native byte order), kEventRecordBytes each.
constexpr int kEvType = 0, kEvStatus = 4, kEvSession = 8, kEvJob = 16, kEvMessage = 20, kEvGroup = 24, kEvData = 32,
              kEvLen = 40, kEvHandle = 48, kEvReport = 56, kEvEpochAt = 64, kEvEpochTlr = 72, kEvEpochLoss = 80,
              kEvEpochRate = 88, kEvEpochClass = 96, kEvReserved = 100;
constexpr int kEventRecordBytes = 104;
// Submit descriptor, kSubmitRecordBytes each (status written back).
constexpr int kSubGroup = 0, kSubIndex = 4, kSubAddress = 8, kSubLength = 16, kSubStatus = 20;
constexpr int kSubmitRecordBytes = 24;

struct Slot {
  const char* name;
  int offset;
};
constexpr Slot kEventSlots[] = {
    {"type", kEvType},
    {"status", kEvStatus},
    {"session", kEvSession},
    {"job", kEvJob},
    {"message", kEvMessage},
    {"group_id", kEvGroup},
    {"data", kEvData},
    {"len", kEvLen},
    {"handle", kEvHandle},
    {"report", kEvReport},
    {"epoch_at_ns", kEvEpochAt},
    {"epoch_tlr", kEvEpochTlr},
    {"epoch_loss", kEvEpochLoss},
    {"epoch_rate_bps", kEvEpochRate},
    {"epoch_priority_class", kEvEpochClass},
    {"reserved", kEvReserved},
};
constexpr Slot kSubmitSlots[] = {
    {"group_index", kSubGroup}, {"index", kSubIndex},   {"address", kSubAddress},
    {"length", kSubLength},     {"status", kSubStatus},
};

// ---- named long[] records -------------------------------------------------------------------------------------
// The configuration, job reports, group reports and counters cross JNI as long[]s whose slots are named: each
// table lists its record's fields once, in slot order (doubles travel as their IEEE-754 bits). recordFields()
// hands the names to Java, where NativeLibrary compares them with its own tables when the library loads, so a jar
// and a library from different builds fail there, naming the first slot that differs. A new field is one line
// here and one line in the Java table of the same record.
enum Record : jint {
  kRecordConfig = 0,
  kRecordReport = 1,
  kRecordGroup = 2,
  kRecordStats = 3,
  kRecordEvent = 4,
  kRecordSubmit = 5
};

template <typename S>
struct Field {
  const char* name;
  jlong (*get)(const S&);
  void (*set)(S&, jlong);  // null in records that only go to Java
};

template <typename T>
jlong to_slot(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    const double d = v;
    jlong bits;
    std::memcpy(&bits, &d, sizeof bits);
    return bits;
  } else {
    return static_cast<jlong>(v);
  }
}
template <typename T>
T from_slot(jlong v) {
  if constexpr (std::is_floating_point_v<T>) {
    double d;
    std::memcpy(&d, &v, sizeof d);
    return static_cast<T>(d);
  } else {
    return static_cast<T>(v);
  }
}

#define NA_RW(S, f)                                                                                         \
  Field<S> {                                                                                                \
#f, [](const S& s) { return to_slot(s.f); }, [](S & s, jlong v) { s.f = from_slot<decltype(S::f)>(v); } \
  }
#define NA_RW_AT(S, f, i)                                                                                              \
  Field<S> {                                                                                                           \
#f "[" #i "]",                                                                                                     \
        [](const S&                                                                                                    \
               s) { return to_slot(s.f[i]); },                                                                         \
                                            [](S & s,                                                                  \
                                               jlong                                                                   \
                                                   v) { s.f[i] = from_slot<std::remove_extent_t<decltype(S::f)>>(v); } \
  }
#define NA_RO(S, f)                                      \
  Field<S> {                                             \
#f, [](const S& s) { return to_slot(s.f); }, nullptr \
  }
#define NA_RO_AT(S, f, i)                                              \
  Field<S> {                                                           \
#f "[" #i "]", [](const S& s) { return to_slot(s.f[i]); }, nullptr \
  }

// na_config without struct_size (set by na_config_init) and bind_address (a string, passed on its own).
constexpr Field<na_config> kConfigFields[] = {
    NA_RW(na_config, line_rate_bps),
    NA_RW(na_config, max_datagram),
    NA_RW(na_config, reaction_speed),
    NA_RW(na_config, tlr_floor),
    NA_RW(na_config, initial_rtt_ns),
    NA_RW(na_config, min_epoch_ns),
    NA_RW(na_config, ack_delay_ns),
    NA_RW(na_config, ack_every),
    NA_RW(na_config, idle_timeout_ns),
    NA_RW(na_config, peer_death_timeout_ns),
    NA_RW(na_config, recv_buffer_bytes),
    NA_RW(na_config, send_buffer_bytes),
    NA_RW(na_config, max_message_bytes),
    NA_RW(na_config, max_sessions),
    NA_RW(na_config, max_jobs_per_session),
    NA_RW(na_config, max_messages_per_job),
    NA_RW(na_config, max_groups_per_job),
    NA_RW(na_config, max_pending_events),
    NA_RW_AT(na_config, dscp_by_class, 0),
    NA_RW_AT(na_config, dscp_by_class, 1),
    NA_RW_AT(na_config, dscp_by_class, 2),
    NA_RW_AT(na_config, dscp_by_class, 3),
    NA_RW_AT(na_config, dscp_by_class, 4),
    NA_RW_AT(na_config, dscp_by_class, 5),
    NA_RW_AT(na_config, dscp_by_class, 6),
    NA_RW_AT(na_config, dscp_by_class, 7),
    NA_RW(na_config, no_priority_dscp),
    NA_RW(na_config, mode),
    NA_RW(na_config, fault_drop_outgoing),
    NA_RW(na_config, fault_drop_incoming),
    NA_RW(na_config, fault_seed),
    NA_RW(na_config, bind_port),
    NA_RW(na_config, enable_gso),
    NA_RW(na_config, enable_gro),
    NA_RW(na_config, socket_buffer_bytes),
    NA_RW(na_config, event_queue_capacity),
    NA_RW(na_config, max_peers),
    NA_RW(na_config, trace_epochs),
    NA_RW(na_config, payload_auth),
    NA_RW(na_config, prefer_aes_gcm),
    NA_RW(na_config, coalesce_messages),
    NA_RW(na_config, wire_overhead_bytes),
    NA_RW(na_config, max_report_ranges),
    NA_RW(na_config, needy_class0_fraction),
};

constexpr Field<na_report_info> kReportFields[] = {
    NA_RO(na_report_info, session),
    NA_RO(na_report_info, job),
    NA_RO(na_report_info, is_sender),
    NA_RO(na_report_info, status),
    NA_RO(na_report_info, messages),
    NA_RO(na_report_info, delivered),
    NA_RO(na_report_info, lost),
    NA_RO(na_report_info, measured_loss),
    NA_RO(na_report_info, packets_sent),
    NA_RO(na_report_info, packets_retransmitted),
    NA_RO(na_report_info, bytes_sent),
    NA_RO(na_report_info, epochs),
    NA_RO(na_report_info, started_ns),
    NA_RO(na_report_info, finished_ns),
    NA_RO(na_report_info, jct_ns),
    NA_RO_AT(na_report_info, time_in_class_ns, 0),
    NA_RO_AT(na_report_info, time_in_class_ns, 1),
    NA_RO_AT(na_report_info, time_in_class_ns, 2),
    NA_RO_AT(na_report_info, time_in_class_ns, 3),
    NA_RO_AT(na_report_info, time_in_class_ns, 4),
    NA_RO_AT(na_report_info, time_in_class_ns, 5),
    NA_RO_AT(na_report_info, time_in_class_ns, 6),
    NA_RO_AT(na_report_info, time_in_class_ns, 7),
    NA_RO(na_report_info, n_groups),
    NA_RO(na_report_info, announces_sent),
    NA_RO(na_report_info, updates_sent),
    NA_RO(na_report_info, dones_sent),
    NA_RO(na_report_info, start_to_running_ns),
    NA_RO(na_report_info, last_data_to_done_ns),
    NA_RO(na_report_info, announce_probes),
    NA_RO(na_report_info, acks_while_starting),
    NA_RO(na_report_info, announces_received),
    NA_RO(na_report_info, announces_duplicate),
    NA_RO(na_report_info, announces_acked),
    NA_RO(na_report_info, early_data_packets),
};

// na_group_report without the range pointers (reportGroupRanges copies the ranges).
constexpr Field<na_group_report> kGroupFields[] = {
    NA_RO(na_group_report, group_id),
    NA_RO(na_group_report, size),
    NA_RO(na_group_report, target),
    NA_RO(na_group_report, delivered),
    NA_RO(na_group_report, lost),
    NA_RO(na_group_report, target_unreachable),
    NA_RO(na_group_report, n_delivered_ranges),
    NA_RO(na_group_report, n_lost_ranges),
};

constexpr Field<na_stats> kStatsFields[] = {
    NA_RO(na_stats, datagrams_in),
    NA_RO(na_stats, datagrams_out),
    NA_RO(na_stats, bytes_in),
    NA_RO(na_stats, bytes_out),
    NA_RO(na_stats, dropped_malformed),
    NA_RO(na_stats, dropped_unknown_session),
    NA_RO(na_stats, dropped_auth),
    NA_RO(na_stats, dropped_replay_or_old),
    NA_RO(na_stats, dropped_no_buffer),
    NA_RO(na_stats, dropped_unknown_job),
    NA_RO(na_stats, dropped_fault_in),
    NA_RO(na_stats, dropped_fault_out),
    NA_RO(na_stats, events_dropped),
    NA_RO(na_stats, auth_policy_mismatches),
    NA_RO(na_stats, farewells_dropped),
    NA_RO(na_stats, sessions),
    NA_RO(na_stats, jobs),
    NA_RO(na_stats, recv_syscalls),
    NA_RO(na_stats, send_syscalls),
    NA_RO(na_stats, udp_datagrams_received),
    NA_RO(na_stats, udp_datagrams_sent),
    NA_RO(na_stats, gro_buffers),
    NA_RO(na_stats, gso_sends),
    NA_RO(na_stats, send_errors),
    NA_RO(na_stats, send_eagain),
    NA_RO(na_stats, recv_errors),
    NA_RO(na_stats, recv_truncated),
    NA_RO(na_stats, peer_evictions),
    NA_RO(na_stats, unknown_peer_transmits),
    NA_RO(na_stats, wakeups),
    NA_RO(na_stats, loop_iterations),
    NA_RO(na_stats, gso_enabled),
    NA_RO(na_stats, gro_enabled),
};
#undef NA_RW
#undef NA_RW_AT
#undef NA_RO
#undef NA_RO_AT

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

template <typename S, size_t N>
constexpr jsize slots(const Field<S> (&)[N]) {
  return static_cast<jsize>(N);
}

// The record's values into a Java long[] of exactly its slot count.
template <typename S, size_t N>
jint write_record(JNIEnv* env, const Field<S> (&table)[N], const S& s, jlongArray out) {
  if (out == nullptr || env->GetArrayLength(out) != static_cast<jsize>(N)) return NA_ERR_INVALID_ARGUMENT;
  jlong v[N];
  for (size_t i = 0; i < N; ++i) v[i] = table[i].get(s);
  env->SetLongArrayRegion(out, 0, static_cast<jsize>(N), v);
  return NA_OK;
}

bool array_len_at_least(JNIEnv* env, jarray a, jsize n) { return a != nullptr && env->GetArrayLength(a) >= n; }

// ---- natives --------------------------------------------------------------------------------------------------
jintArray JNICALL layoutInfo(JNIEnv* env, jclass) {
  const jint v[] = {kEventRecordBytes, kSubmitRecordBytes, static_cast<jint>(sizeof(void*))};
  jintArray out = env->NewIntArray(sizeof v / sizeof v[0]);
  if (out) env->SetIntArrayRegion(out, 0, sizeof v / sizeof v[0], v);
  return out;
}

template <typename T>
jobjectArray string_array(JNIEnv* env, const T* items, size_t n, std::string (*text)(const T&)) {
  jclass string_class = env->FindClass("java/lang/String");
  if (string_class == nullptr) return nullptr;
  jobjectArray out = env->NewObjectArray(static_cast<jsize>(n), string_class, nullptr);
  for (size_t i = 0; out != nullptr && i < n; ++i) {
    jstring s = env->NewStringUTF(text(items[i]).c_str());
    if (s == nullptr) return nullptr;  // OutOfMemoryError pending
    env->SetObjectArrayElement(out, static_cast<jsize>(i), s);
    env->DeleteLocalRef(s);
  }
  return out;
}

template <typename S, size_t N>
jobjectArray field_names(JNIEnv* env, const Field<S> (&table)[N]) {
  return string_array<Field<S>>(env, table, N, [](const Field<S>& f) { return std::string(f.name); });
}

template <size_t N>
jobjectArray slot_names(JNIEnv* env, const Slot (&table)[N]) {
  return string_array<Slot>(env, table, N,
                            [](const Slot& s) { return std::string(s.name) + "@" + std::to_string(s.offset); });
}

// The slot names of one record, in slot order ("name@offset" for the byte records); null for an unknown record.
jobjectArray JNICALL recordFields(JNIEnv* env, jclass, jint record) {
  switch (record) {
    case kRecordConfig: return field_names(env, kConfigFields);
    case kRecordReport: return field_names(env, kReportFields);
    case kRecordGroup: return field_names(env, kGroupFields);
    case kRecordStats: return field_names(env, kStatsFields);
    case kRecordEvent: return slot_names(env, kEventSlots);
    case kRecordSubmit: return slot_names(env, kSubmitSlots);
    default: return nullptr;
  }
}

jstring JNICALL version(JNIEnv* env, jclass) { return env->NewStringUTF(na_version()); }
jstring JNICALL strerror_(JNIEnv* env, jclass, jint code) { return env->NewStringUTF(na_strerror(code)); }

jint JNICALL configDefaults(JNIEnv* env, jclass, jlongArray config) {
  na_config c;
  int rc = na_config_init(&c);
  if (rc != NA_OK) return rc;
  return write_record(env, kConfigFields, c, config);
}

// Returns the engine handle (> 0) or a negative NA_ERR_* code; on failure errOut[0] holds the engine's message.
// Values were validated in Java (AtpConfig); the engine validates again and reports through errbuf.
jlong JNICALL engineOpen(JNIEnv* env, jclass, jlongArray config, jstring bindAddress, jobjectArray errOut) {
  if (config == nullptr || env->GetArrayLength(config) != slots(kConfigFields) || bindAddress == nullptr)
    return NA_ERR_INVALID_ARGUMENT;
  na_config c;
  int rc = na_config_init(&c);
  if (rc != NA_OK) return rc;
  jlong v[slots(kConfigFields)];
  env->GetLongArrayRegion(config, 0, slots(kConfigFields), v);
  for (jsize i = 0; i < slots(kConfigFields); ++i) kConfigFields[i].set(c, v[i]);
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
  if (!array_len_at_least(env, key, 32) || host == nullptr || port < 0 || port > 65535) return NA_ERR_INVALID_ARGUMENT;
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
                      jdoubleArray msrs, jint n, jboolean mrdf, jlong deadlineNs) {
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
  if (deadlineNs < 0) return NA_ERR_INVALID_ARGUMENT;
  return na_job_start_deadline(E(h), static_cast<uint64_t>(sid), static_cast<uint32_t>(job), g.data(), g.size(),
                               mrdf ? 1 : 0, static_cast<uint64_t>(deadlineNs));
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
  return na_job_submit_wait(E(h), static_cast<uint64_t>(sid), static_cast<uint32_t>(job), static_cast<uint32_t>(group),
                            static_cast<uint32_t>(index), p, static_cast<size_t>(len), timeoutMs);
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

// Batched submit: `count` descriptors (kSubmitRecordBytes each) at descAddress, handed to na_job_submit_batch in
// chunks (one engine lock and one I/O wake-up per chunk instead of per message), sharing one deadline (timeoutMs:
// 0 = never wait, < 0 = forever). Returns how many were accepted, always a prefix; the status of the first
// descriptor not accepted is written into its status field (and every accepted descriptor's status is NA_OK). A
// negative return is an error before anything was tried. A descriptor with a non-positive length, a null address
// or a negative index is refused with NA_ERR_INVALID_ARGUMENT once the ones before it were submitted.
jint JNICALL submitBatch(JNIEnv*, jclass, jlong h, jlong sid, jint job, jlong descAddress, jint count, jint timeoutMs) {
  if (descAddress == 0 || count < 0) return NA_ERR_INVALID_ARGUMENT;
  auto* d = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(descAddress));
  auto record = [&](jint i) { return d + static_cast<ptrdiff_t>(i) * kSubmitRecordBytes; };
  constexpr jint kChunk = 256;  // 8 KiB of stack
  na_submit_entry e[kChunk];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeoutMs, 0));
  jint done = 0;
  while (done < count) {
    jint m = 0;
    bool bad = false;
    for (; m < kChunk && done + m < count; ++m) {
      const uint8_t* r = record(done + m);
      const int32_t group = get<int32_t>(r, kSubGroup), index = get<int32_t>(r, kSubIndex),
                    len = get<int32_t>(r, kSubLength);
      const uint64_t addr = get<uint64_t>(r, kSubAddress);
      if (len <= 0 || addr == 0 || group < 0 || index < 0) {
        bad = true;
        break;
      }
      e[m] =
          na_submit_entry{static_cast<uint32_t>(group), static_cast<uint32_t>(index),
                          reinterpret_cast<const void*>(static_cast<uintptr_t>(addr)), static_cast<size_t>(len), NA_OK};
    }
    int wait = timeoutMs;
    if (timeoutMs > 0 && done > 0) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      wait = static_cast<int>(std::max<int64_t>(left.count(), 1));
    }
    const int k = m > 0 ? na_job_submit_batch(E(h), static_cast<uint64_t>(sid), static_cast<uint32_t>(job), e,
                                              static_cast<size_t>(m), wait)
                        : 0;
    if (k < 0) {
      if (done == 0) return k;
      put<int32_t>(record(done), kSubStatus, k);
      return done;
    }
    for (int i = 0; i < k; ++i) put<int32_t>(record(done + i), kSubStatus, NA_OK);
    done += k;
    if (k < m) {
      put<int32_t>(record(done), kSubStatus, e[k].status);
      return done;
    }
    if (bad) {
      put<int32_t>(record(done), kSubStatus, NA_ERR_INVALID_ARGUMENT);
      return done;
    }
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
  // Each event is written into its record straight from the driver's queue (no intermediate event arrays).
  return netapprox::capi::poll_events_visit(
      E(h), max, timeoutMs,
      [](void* ctx, int i, const na_event& e) {
        uint8_t* r = static_cast<uint8_t*>(ctx) + static_cast<ptrdiff_t>(i) * kEventRecordBytes;
        put<int32_t>(r, kEvType, e.type);
        put<int32_t>(r, kEvStatus, e.status);
        put<uint64_t>(r, kEvSession, e.session);
        put<uint32_t>(r, kEvJob, e.job);
        put<uint32_t>(r, kEvMessage, e.message);
        put<uint64_t>(r, kEvGroup, e.group_id);
        put<uint64_t>(r, kEvData, reinterpret_cast<uintptr_t>(e.data));
        put<uint64_t>(r, kEvLen, static_cast<uint64_t>(e.len));
        put<uint64_t>(r, kEvHandle, e.handle);
        put<uint64_t>(r, kEvReport, reinterpret_cast<uintptr_t>(e.report));
        put<uint64_t>(r, kEvEpochAt, e.epoch_at_ns);
        put<double>(r, kEvEpochTlr, e.epoch_tlr);
        put<double>(r, kEvEpochLoss, e.epoch_loss);
        put<double>(r, kEvEpochRate, e.epoch_rate_bps);
        put<int32_t>(r, kEvEpochClass, e.epoch_priority_class);
        put<int32_t>(r, kEvReserved, 0);
      },
      base);
}

jint JNICALL messageRelease(JNIEnv*, jclass, jlong h, jlong handle) {
  return na_message_release(E(h), static_cast<uint64_t>(handle));
}

// Releases `count` message handles (native-order uint64 at `address`, 8-byte aligned) in one crossing: the event
// thread hands back a whole batch of delivered messages at once. Returns how many were released or an error.
jint JNICALL messageReleaseBatch(JNIEnv*, jclass, jlong h, jlong address, jint count) {
  if (count < 0 || (count > 0 && (address == 0 || address % alignof(uint64_t) != 0))) return NA_ERR_INVALID_ARGUMENT;
  return na_message_release_batch(E(h), reinterpret_cast<const uint64_t*>(static_cast<uintptr_t>(address)),
                                  static_cast<size_t>(count));
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
  na_report_info i;
  int rc = na_report_get_info(R(r), &i);
  if (rc != NA_OK) return rc;
  return write_record(env, kReportFields, i, out);
}

jint JNICALL reportGroup(JNIEnv* env, jclass, jlong r, jint index, jlongArray out) {
  if (index < 0) return NA_ERR_INVALID_ARGUMENT;
  na_group_report g;
  int rc = na_report_get_group(R(r), static_cast<uint32_t>(index), &g);
  if (rc != NA_OK) return rc;
  return write_record(env, kGroupFields, g, out);
}

// Copies n ranges into firsts/lasts (each at least n long).
static bool copy_ranges(JNIEnv* env, const na_id_range* ranges, uint32_t n, jintArray firsts, jintArray lasts) {
  if (n == 0) return true;
  if (!array_len_at_least(env, firsts, static_cast<jsize>(n)) || !array_len_at_least(env, lasts, static_cast<jsize>(n)))
    return false;
  std::vector<jint> f(n), l(n);
  for (uint32_t i = 0; i < n; ++i) {
    f[i] = static_cast<jint>(ranges[i].first);
    l[i] = static_cast<jint>(ranges[i].last);
  }
  env->SetIntArrayRegion(firsts, 0, static_cast<jsize>(n), f.data());
  env->SetIntArrayRegion(lasts, 0, static_cast<jsize>(n), l.data());
  return true;
}

jint JNICALL reportGroupRanges(JNIEnv* env, jclass, jlong r, jint index, jintArray delivered_firsts,
                               jintArray delivered_lasts, jintArray lost_firsts, jintArray lost_lasts) {
  if (index < 0) return NA_ERR_INVALID_ARGUMENT;
  na_group_report g;
  int rc = na_report_get_group(R(r), static_cast<uint32_t>(index), &g);
  if (rc != NA_OK) return rc;
  if (!copy_ranges(env, g.delivered_ranges, g.n_delivered_ranges, delivered_firsts, delivered_lasts) ||
      !copy_ranges(env, g.lost_ranges, g.n_lost_ranges, lost_firsts, lost_lasts))
    return NA_ERR_BUFFER_TOO_SMALL;
  return NA_OK;
}

jint JNICALL reportFree(JNIEnv*, jclass, jlong r) { return na_report_free(R(r)); }

jint JNICALL engineStats(JNIEnv* env, jclass, jlong h, jlongArray out) {
  na_stats s;
  int rc = na_engine_stats(E(h), &s);
  if (rc != NA_OK) return rc;
  return write_record(env, kStatsFields, s, out);
}

// Bytes currently allocated with malloc in this process (glibc mallinfo2: in-use arena bytes + mmapped chunks).
// A native-memory counter for leak tests; -1 when unavailable. mallinfo2 is looked up at run time: it is new in
// glibc 2.33 and the shipped library targets glibc 2.17 (docs/architecture.md), so it must not be a link-time
// dependency. The struct is glibc's struct mallinfo2 (ten size_t), declared here since old headers lack it.
struct MallInfo2 {
  size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};
jlong JNICALL mallocInUse(JNIEnv*, jclass) {
  using Fn = MallInfo2 (*)();
  static const Fn fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "mallinfo2"));
  if (fn == nullptr) return -1;
  const MallInfo2 mi = fn();
  return static_cast<jlong>(mi.uordblks + mi.hblkhd);
}

#define NM(name, sig, fn) \
  { const_cast<char*>(name), const_cast<char*>(sig), reinterpret_cast<void*>(fn) }
const JNINativeMethod kMethods[] = {
    NM("layoutInfo", "()[I", layoutInfo),
    NM("recordFields", "(I)[Ljava/lang/String;", recordFields),
    NM("version", "()Ljava/lang/String;", version),
    NM("strerror", "(I)Ljava/lang/String;", strerror_),
    NM("configDefaults", "([J)I", configDefaults),
    NM("engineOpen", "([JLjava/lang/String;[Ljava/lang/String;)J", engineOpen),
    NM("engineClose", "(J)I", engineClose),
    NM("localPort", "(J)I", localPort),
    NM("sessionOpen", "(JJ[BLjava/lang/String;IZ)I", sessionOpen),
    NM("sessionSetPeer", "(JJLjava/lang/String;I)I", sessionSetPeer),
    NM("sessionClose", "(JJ)I", sessionClose),
    NM("jobStart", "(JJI[J[I[DIZJ)I", jobStart),
    NM("submitAddress", "(JJIIIJII)I", submitAddress),
    NM("submitBuffer", "(JJIIILjava/nio/ByteBuffer;III)I", submitBuffer),
    NM("submitBatch", "(JJIJII)I", submitBatch),
    NM("jobUpdateMsr", "(JJI[I[DI)I", jobUpdateMsr),
    NM("jobCancel", "(JJI)I", jobCancel),
    NM("pollEvents", "(JLjava/nio/ByteBuffer;II)I", pollEvents),
    NM("messageRelease", "(JJ)I", messageRelease),
    NM("messageReleaseBatch", "(JJI)I", messageReleaseBatch),
    NM("wrapAddress", "(JJ)Ljava/nio/ByteBuffer;", wrapAddress),
    NM("directAddress", "(Ljava/nio/ByteBuffer;)J", directAddress),
    NM("reportInfo", "(J[J)I", reportInfo),
    NM("reportGroup", "(JI[J)I", reportGroup),
    NM("reportGroupRanges", "(JI[I[I[I[I)I", reportGroupRanges),
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
    } else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$')) {
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
