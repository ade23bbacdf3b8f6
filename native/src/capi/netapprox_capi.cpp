// C API over netapprox::driver::Driver. See include/netapprox/netapprox.h for the contract.
//
// Handles: an na_engine* is not a pointer to memory but an opaque, never-reused token looked up in a registry,
// so NULL, garbage and already-closed handles are detected (NA_ERR_CLOSED_HANDLE) instead of dereferenced.
// na_report* are real heap objects, but every accessor checks them against a registry of live reports first.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "capi/poll_visit.hpp"
#include "driver/driver.hpp"
#include "netapprox/netapprox.h"

using netapprox::atp::Status;
namespace atp = netapprox::atp;
namespace drv = netapprox::driver;

struct na_report {
  std::shared_ptr<const atp::JobReport> rep;
};

namespace {

struct EngineBox {
  std::unique_ptr<drv::Driver> driver;
};

// Lock order: reg_mu() is a leaf. poll_events_visit takes it while a driver's mutex is held (it registers each
// JOB_DONE report as it converts the event in place); no code may call into a driver - or anything else that
// locks - while holding reg_mu(), or the two orders could deadlock. Every reg_mu() section below only touches the
// two registries (checked for issue 11; the JNI event sink takes no lock and makes no JNI call).
std::mutex& reg_mu() {
  static std::mutex m;
  return m;
}
std::unordered_map<uintptr_t, std::shared_ptr<EngineBox>>& engines() {
  static auto* m = new std::unordered_map<uintptr_t, std::shared_ptr<EngineBox>>();
  return *m;
}
std::unordered_set<const na_report*>& reports() {
  static auto* s = new std::unordered_set<const na_report*>();
  return *s;
}
uintptr_t next_token = 0x6e61'0000;  // guarded by reg_mu(); tokens step by 16 and are never reused

std::shared_ptr<EngineBox> lookup(na_engine* eng) {
  if (!eng) return nullptr;
  std::lock_guard<std::mutex> lk(reg_mu());
  auto it = engines().find(reinterpret_cast<uintptr_t>(eng));
  if (it == engines().end()) return nullptr;
  return it->second;
}

bool live_report(const na_report* r) {
  if (!r) return false;
  std::lock_guard<std::mutex> lk(reg_mu());
  return reports().count(r) != 0;
}

int code(Status s) { return static_cast<int>(s); }

static_assert(NA_ERR_INVALID_ARGUMENT == static_cast<int>(Status::kInvalidArgument), "status mismatch");
static_assert(NA_ERR_NOT_FOUND == static_cast<int>(Status::kNotFound), "status mismatch");
static_assert(NA_ERR_ALREADY_EXISTS == static_cast<int>(Status::kAlreadyExists), "status mismatch");
static_assert(NA_ERR_WOULD_BLOCK == static_cast<int>(Status::kWouldBlock), "status mismatch");
static_assert(NA_ERR_LIMIT_EXCEEDED == static_cast<int>(Status::kLimitExceeded), "status mismatch");
static_assert(NA_ERR_CLOSED == static_cast<int>(Status::kClosed), "status mismatch");
static_assert(NA_ERR_PEER_DEAD == static_cast<int>(Status::kPeerDead), "status mismatch");
static_assert(NA_ERR_IDLE_TIMEOUT == static_cast<int>(Status::kIdleTimeout), "status mismatch");
static_assert(NA_ERR_PROTOCOL == static_cast<int>(Status::kProtocolError), "status mismatch");
static_assert(NA_ERR_INTERNAL == static_cast<int>(Status::kInternal), "status mismatch");
static_assert(NA_EVENT_MESSAGE == static_cast<int>(atp::EventType::kMessage), "event mismatch");
static_assert(NA_EVENT_MESSAGE_LOST == static_cast<int>(atp::EventType::kMessageLost), "event mismatch");
static_assert(NA_EVENT_JOB_STARTED == static_cast<int>(atp::EventType::kJobStarted), "event mismatch");
static_assert(NA_EVENT_JOB_DONE == static_cast<int>(atp::EventType::kJobDone), "event mismatch");
static_assert(NA_EVENT_SESSION_ERROR == static_cast<int>(atp::EventType::kSessionError), "event mismatch");
static_assert(NA_EVENT_EPOCH == static_cast<int>(atp::EventType::kEpoch), "event mismatch");
static_assert(NA_MODE_FULL == static_cast<int>(atp::Mode::kFull), "mode mismatch");
static_assert(NA_MODE_PAPER == static_cast<int>(atp::Mode::kPaper), "mode mismatch");

void set_err(char* errbuf, size_t errlen, const std::string& msg) {
  if (!errbuf || errlen == 0) return;
  size_t n = std::min(errlen - 1, msg.size());
  memcpy(errbuf, msg.data(), n);
  errbuf[n] = '\0';
}

bool finite_in(double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; }

// Wraps every entry point: C++ exceptions never cross the C boundary.
template <typename F>
int guarded(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return NA_ERR_INTERNAL;
  } catch (...) {
    return NA_ERR_INTERNAL;
  }
}

}  // namespace

extern "C" {

NA_API int na_config_init(na_config* cfg) {
  if (!cfg) return NA_ERR_INVALID_ARGUMENT;
  atp::EngineConfig e;
  drv::DriverConfig d;
  memset(cfg, 0, sizeof *cfg);
  cfg->struct_size = sizeof(na_config);
  cfg->line_rate_bps = e.line_rate_bps;
  cfg->max_datagram = e.max_datagram;
  cfg->reaction_speed = e.reaction_speed;
  cfg->tlr_floor = e.tlr_floor;
  cfg->initial_rtt_ns = e.initial_rtt;
  cfg->min_epoch_ns = e.min_epoch;
  cfg->ack_delay_ns = e.ack_delay;
  cfg->ack_every = e.ack_every;
  cfg->idle_timeout_ns = e.idle_timeout;
  cfg->peer_death_timeout_ns = e.peer_death_timeout;
  cfg->recv_buffer_bytes = e.recv_buffer_bytes;
  cfg->send_buffer_bytes = e.send_buffer_bytes;
  cfg->max_message_bytes = e.max_message_bytes;
  cfg->max_sessions = e.max_sessions;
  cfg->max_jobs_per_session = e.max_jobs_per_session;
  cfg->max_messages_per_job = e.max_messages_per_job;
  cfg->max_groups_per_job = e.max_groups_per_job;
  cfg->max_pending_events = e.max_pending_events;
  memcpy(cfg->dscp_by_class, e.dscp_by_class, sizeof cfg->dscp_by_class);
  cfg->no_priority_dscp = e.no_priority_dscp;
  cfg->mode = static_cast<int32_t>(e.mode);
  cfg->fault_drop_outgoing = e.faults.drop_outgoing;
  cfg->fault_drop_incoming = e.faults.drop_incoming;
  cfg->fault_seed = e.faults.seed;
  snprintf(cfg->bind_address, sizeof cfg->bind_address, "%s", d.bind_address.c_str());
  cfg->bind_port = d.bind_port;
  cfg->enable_gso = d.enable_gso ? 1 : 0;
  cfg->enable_gro = d.enable_gro ? 1 : 0;
  cfg->socket_buffer_bytes = d.socket_buffer_bytes;
  cfg->event_queue_capacity = d.event_queue_capacity;
  cfg->max_peers = d.max_peers;
  cfg->trace_epochs = d.trace_epochs ? 1 : 0;
  cfg->payload_auth = e.payload_auth ? 1 : 0;
  cfg->prefer_aes_gcm = e.prefer_aes_gcm ? 1 : 0;
  cfg->coalesce_messages = e.coalesce_messages ? 1 : 0;
  cfg->wire_overhead_bytes = e.wire_overhead_bytes;
  cfg->max_report_ranges = e.max_report_ranges;
  cfg->needy_class0_fraction = e.needy_class0_fraction;
  return NA_OK;
}

NA_API int na_engine_open(const na_config* cfg, na_engine** out, char* errbuf, size_t errlen) {
  return guarded([&]() -> int {
    if (out) *out = nullptr;
    if (!cfg || !out) {
      set_err(errbuf, errlen, "cfg and out must not be NULL");
      return NA_ERR_INVALID_ARGUMENT;
    }
    if (cfg->struct_size != sizeof(na_config)) {
      set_err(errbuf, errlen, "na_config.struct_size mismatch: call na_config_init first");
      return NA_ERR_INVALID_ARGUMENT;
    }
    if (cfg->mode < NA_MODE_BASE || cfg->mode > NA_MODE_PAPER) {
      set_err(errbuf, errlen, "mode out of range");
      return NA_ERR_INVALID_ARGUMENT;
    }
    if (memchr(cfg->bind_address, '\0', sizeof cfg->bind_address) == nullptr) {
      set_err(errbuf, errlen, "bind_address is not NUL-terminated");
      return NA_ERR_INVALID_ARGUMENT;
    }
    if (!finite_in(cfg->fault_drop_outgoing, 0, 1) || !finite_in(cfg->fault_drop_incoming, 0, 1)) {
      set_err(errbuf, errlen, "fault drop fractions must be in [0, 1]");
      return NA_ERR_INVALID_ARGUMENT;
    }
    drv::DriverConfig d;
    atp::EngineConfig& e = d.engine;
    e.line_rate_bps = cfg->line_rate_bps;
    e.max_datagram = cfg->max_datagram;
    e.reaction_speed = cfg->reaction_speed;
    e.tlr_floor = cfg->tlr_floor;
    e.initial_rtt = cfg->initial_rtt_ns;
    e.min_epoch = cfg->min_epoch_ns;
    e.ack_delay = cfg->ack_delay_ns;
    e.ack_every = cfg->ack_every;
    e.idle_timeout = cfg->idle_timeout_ns;
    e.peer_death_timeout = cfg->peer_death_timeout_ns;
    e.recv_buffer_bytes = cfg->recv_buffer_bytes;
    e.send_buffer_bytes = cfg->send_buffer_bytes;
    e.max_message_bytes = cfg->max_message_bytes;
    e.max_sessions = cfg->max_sessions;
    e.max_jobs_per_session = cfg->max_jobs_per_session;
    e.max_messages_per_job = cfg->max_messages_per_job;
    e.max_groups_per_job = cfg->max_groups_per_job;
    e.max_pending_events = cfg->max_pending_events;
    memcpy(e.dscp_by_class, cfg->dscp_by_class, sizeof e.dscp_by_class);
    e.no_priority_dscp = cfg->no_priority_dscp;
    e.mode = static_cast<atp::Mode>(cfg->mode);
    e.faults.drop_outgoing = cfg->fault_drop_outgoing;
    e.faults.drop_incoming = cfg->fault_drop_incoming;
    e.faults.seed = cfg->fault_seed;
    d.bind_address = cfg->bind_address;
    d.bind_port = cfg->bind_port;
    d.enable_gso = cfg->enable_gso != 0;
    d.enable_gro = cfg->enable_gro != 0;
    d.socket_buffer_bytes = cfg->socket_buffer_bytes;
    d.event_queue_capacity = cfg->event_queue_capacity;
    d.max_peers = cfg->max_peers;
    d.trace_epochs = cfg->trace_epochs != 0;
    e.payload_auth = cfg->payload_auth != 0;
    e.prefer_aes_gcm = cfg->prefer_aes_gcm != 0;
    e.coalesce_messages = cfg->coalesce_messages != 0;
    e.wire_overhead_bytes = cfg->wire_overhead_bytes;
    e.max_report_ranges = cfg->max_report_ranges;
    e.needy_class0_fraction = cfg->needy_class0_fraction;

    std::string err;
    std::unique_ptr<drv::Driver> driver;
    Status st = drv::Driver::create(d, &driver, &err);
    if (st != Status::kOk) {
      set_err(errbuf, errlen, err);
      return st == Status::kInternal ? NA_ERR_SYSTEM : code(st);
    }
    auto box = std::make_shared<EngineBox>();
    box->driver = std::move(driver);
    std::lock_guard<std::mutex> lk(reg_mu());
    next_token += 16;
    uintptr_t token = next_token;
    engines()[token] = std::move(box);
    *out = reinterpret_cast<na_engine*>(token);
    set_err(errbuf, errlen, "");
    return NA_OK;
  });
}

NA_API int na_engine_close(na_engine* eng) {
  return guarded([&]() -> int {
    if (!eng) return NA_ERR_CLOSED_HANDLE;
    std::shared_ptr<EngineBox> box;
    {
      std::lock_guard<std::mutex> lk(reg_mu());
      auto it = engines().find(reinterpret_cast<uintptr_t>(eng));
      if (it == engines().end()) return NA_ERR_CLOSED_HANDLE;
      box = std::move(it->second);
      engines().erase(it);
    }
    // Joins the I/O thread, wakes waiters (they return NA_ERR_CLOSED), frees the engine and closes the fds.
    box->driver->stop();
    return NA_OK;  // the Driver object itself goes away with the last reference (normally this one)
  });
}

NA_API int na_engine_local_port(na_engine* eng) {
  auto box = lookup(eng);
  if (!box) return NA_ERR_CLOSED_HANDLE;
  return box->driver->local_port();
}

NA_API int na_session_open(na_engine* eng, uint64_t session_id, const uint8_t key[32], const char* peer_host,
                           uint16_t peer_port, int initiator) {
  return guarded([&]() -> int {
    auto box = lookup(eng);
    if (!box) return NA_ERR_CLOSED_HANDLE;
    if (!key || !peer_host || strnlen(peer_host, 1024) >= 1024) return NA_ERR_INVALID_ARGUMENT;
    sockaddr_storage a;
    socklen_t len;
    if (box->driver->resolve(peer_host, peer_port, &a, &len) != Status::kOk) return NA_ERR_ADDRESS;
    return code(box->driver->open_session(session_id, key, reinterpret_cast<sockaddr*>(&a), len, initiator != 0));
  });
}

NA_API int na_session_set_peer(na_engine* eng, uint64_t session_id, const char* peer_host, uint16_t peer_port) {
  return guarded([&]() -> int {
    auto box = lookup(eng);
    if (!box) return NA_ERR_CLOSED_HANDLE;
    if (!peer_host) return NA_ERR_INVALID_ARGUMENT;
    sockaddr_storage a;
    socklen_t len;
    if (box->driver->resolve(peer_host, peer_port, &a, &len) != Status::kOk) return NA_ERR_ADDRESS;
    return code(box->driver->set_peer(session_id, peer_host, peer_port));
  });
}

NA_API int na_session_close(na_engine* eng, uint64_t session_id) {
  return guarded([&]() -> int {
    auto box = lookup(eng);
    if (!box) return NA_ERR_CLOSED_HANDLE;
    return code(box->driver->close_session(session_id));
  });
}

NA_API int na_job_start(na_engine* eng, uint64_t session_id, uint32_t job_id, const na_group_spec* groups,
                        size_t n_groups, int mrdf) {
  return na_job_start_deadline(eng, session_id, job_id, groups, n_groups, mrdf, 0);
}

NA_API int na_job_start_deadline(na_engine* eng, uint64_t session_id, uint32_t job_id, const na_group_spec* groups,
                                 size_t n_groups, int mrdf, uint64_t deadline_ns) {
  return guarded([&]() -> int {
    auto box = lookup(eng);
    if (!box) return NA_ERR_CLOSED_HANDLE;
    if (!groups || n_groups == 0) return NA_ERR_INVALID_ARGUMENT;
    if (n_groups > box->driver->config().engine.max_groups_per_job) return NA_ERR_LIMIT_EXCEEDED;
    atp::JobSpec spec;
    spec.job_id = job_id;
    spec.mrdf = mrdf != 0;
    spec.deadline = deadline_ns;
    spec.groups.reserve(n_groups);
    for (size_t i = 0; i < n_groups; ++i) {
      if (!finite_in(groups[i].msr, 0.0, 1.0)) return NA_ERR_INVALID_ARGUMENT;
      spec.groups.push_back(atp::GroupSpec{groups[i].group_id, groups[i].size, groups[i].msr});
    }
    return code(box->driver->start_job(session_id, spec));
  });
}

NA_API int na_job_submit(na_engine* eng, uint64_t session_id, uint32_t job_id, uint32_t group_index, uint32_t index,
                         const void* data, size_t len) {
  return guarded([&]() -> int {
    auto box = lookup(eng);
    if (!box) return NA_ERR_CLOSED_HANDLE;
    if (!data && len > 0) return NA_ERR_INVALID_ARGUMENT;
    return code(box->driver->submit(session_id, job_id, group_index, index, static_cast<const uint8_t*>(data), len));
  });
}

NA_API int na_job_submit_wait(na_engine* eng, uint64_t session_id, uint32_t job_id, uint32_t group_index,
                              uint32_t index, const void* data, size_t len, int timeout_ms) {
  return guarded([&]() -> int {
    auto box = lookup(eng);
    if (!box) return NA_ERR_CLOSED_HANDLE;
    if (!data && len > 0) return NA_ERR_INVALID_ARGUMENT;
    return code(box->driver->submit_wait(session_id, job_id, group_index, index, static_cast<const uint8_t*>(data), len,
                                         timeout_ms));
  });
}

NA_API int na_job_submit_batch(na_engine* eng, uint64_t session_id, uint32_t job_id, na_submit_entry* entries, size_t n,
                               int timeout_ms) {
  return guarded([&]() -> int {
    auto box = lookup(eng);
    if (!box) return NA_ERR_CLOSED_HANDLE;
    if (n == 0) return 0;
    if (!entries) return NA_ERR_INVALID_ARGUMENT;
    if (n > NA_SUBMIT_BATCH_MAX) return NA_ERR_LIMIT_EXCEEDED;
    // Chunks on the stack (6 KiB: callers may be threads with small stacks), one lock per chunk; the deadline is
    // shared by the whole batch.
    constexpr size_t kChunk = 256;
    drv::Driver::SubmitItem items[kChunk];
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
    size_t done = 0;
    while (done < n) {
      const size_t m = std::min(kChunk, n - done);
      for (size_t i = 0; i < m; ++i) {
        const na_submit_entry& e = entries[done + i];
        items[i] = {e.group_index, e.index, static_cast<const uint8_t*>(e.data), e.len};
      }
      int wait = timeout_ms;
      if (timeout_ms > 0 && done > 0) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        wait = static_cast<int>(std::max<int64_t>(left.count(), 0));
        if (wait == 0) wait = 1;  // past the deadline: one short last try, as submit_wait makes
      }
      Status refused = Status::kOk;
      const size_t k = box->driver->submit_batch(session_id, job_id, items, m, wait, &refused);
      for (size_t i = 0; i < k; ++i) entries[done + i].status = NA_OK;
      done += k;
      if (k < m) {
        entries[done].status = code(refused);
        break;
      }
    }
    return static_cast<int>(done);
  });
}

NA_API int na_job_update_msr(na_engine* eng, uint64_t session_id, uint32_t job_id, const uint32_t* group_indices,
                             const double* msrs, size_t n) {
  return guarded([&]() -> int {
    auto box = lookup(eng);
    if (!box) return NA_ERR_CLOSED_HANDLE;
    if (!group_indices || !msrs || n == 0) return NA_ERR_INVALID_ARGUMENT;
    if (n > box->driver->config().engine.max_groups_per_job) return NA_ERR_LIMIT_EXCEEDED;
    std::vector<std::pair<uint32_t, double>> v;
    v.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (!finite_in(msrs[i], 0.0, 1.0)) return NA_ERR_INVALID_ARGUMENT;
      v.emplace_back(group_indices[i], msrs[i]);
    }
    return code(box->driver->update_msr(session_id, job_id, v));
  });
}

NA_API int na_job_cancel(na_engine* eng, uint64_t session_id, uint32_t job_id) {
  return guarded([&]() -> int {
    auto box = lookup(eng);
    if (!box) return NA_ERR_CLOSED_HANDLE;
    return code(box->driver->cancel_job(session_id, job_id));
  });
}

NA_API int na_poll_events(na_engine* eng, na_event* out, int max, int timeout_ms) {
  const netapprox::capi::EventSink to_array = [](void* ctx, int i, const na_event& ev) {
    static_cast<na_event*>(ctx)[i] = ev;
  };
  return netapprox::capi::poll_events_visit(eng, max, timeout_ms, out ? to_array : nullptr, out);
}

NA_API int na_message_release(na_engine* eng, uint64_t handle) {
  return guarded([&]() -> int {
    auto box = lookup(eng);
    if (!box) return NA_ERR_CLOSED_HANDLE;
    return code(box->driver->release(handle));
  });
}

NA_API int na_message_release_batch(na_engine* eng, const uint64_t* handles, size_t n) {
  return guarded([&]() -> int {
    auto box = lookup(eng);
    if (!box) return NA_ERR_CLOSED_HANDLE;
    if (n == 0) return 0;
    if (!handles || n > static_cast<size_t>(INT32_MAX)) return NA_ERR_INVALID_ARGUMENT;
    const int64_t r = box->driver->release_batch(handles, n);
    return r < 0 ? code(static_cast<Status>(r)) : static_cast<int>(r);
  });
}

NA_API int na_report_get_info(const na_report* r, na_report_info* out) {
  return guarded([&]() -> int {
    if (!live_report(r)) return NA_ERR_CLOSED_HANDLE;
    if (!out) return NA_ERR_INVALID_ARGUMENT;
    const atp::JobReport& j = *r->rep;
    memset(out, 0, sizeof *out);
    out->session = j.session;
    out->job = j.job;
    out->is_sender = j.is_sender ? 1 : 0;
    out->status = static_cast<int32_t>(j.status);
    out->messages = j.messages;
    out->delivered = j.delivered;
    out->lost = j.lost;
    out->measured_loss = j.measured_loss;
    out->packets_sent = j.packets_sent;
    out->packets_retransmitted = j.packets_retransmitted;
    out->bytes_sent = j.bytes_sent;
    out->epochs = j.epochs;
    out->started_ns = j.started;
    out->finished_ns = j.finished;
    out->jct_ns = j.finished >= j.started ? j.finished - j.started : 0;
    for (int k = 0; k < 8; ++k) out->time_in_class_ns[k] = j.time_in_class[k];
    out->n_groups = static_cast<uint32_t>(j.groups.size());
    out->announces_sent = j.announces_sent;
    out->updates_sent = j.updates_sent;
    out->dones_sent = j.dones_sent;
    out->start_to_running_ns = j.start_to_running;
    out->last_data_to_done_ns = j.last_data_to_done;
    out->announce_probes = j.announce_probes;
    out->acks_while_starting = j.acks_while_starting;
    out->announces_received = j.announces_received;
    out->announces_duplicate = j.announces_duplicate;
    out->announces_acked = j.announces_acked;
    out->early_data_packets = j.early_data_packets;
    return NA_OK;
  });
}

NA_API int na_report_get_group(const na_report* r, uint32_t index, na_group_report* out) {
  return guarded([&]() -> int {
    if (!live_report(r)) return NA_ERR_CLOSED_HANDLE;
    if (!out) return NA_ERR_INVALID_ARGUMENT;
    const atp::JobReport& j = *r->rep;
    if (index >= j.groups.size()) return NA_ERR_NOT_FOUND;
    const atp::GroupReport& g = j.groups[index];
    memset(out, 0, sizeof *out);
    out->group_id = g.group_id;
    out->size = g.size;
    out->target = g.target;
    out->delivered = g.delivered;
    out->lost = g.lost;
    out->target_unreachable = g.target_unreachable ? 1 : 0;
    static_assert(sizeof(na_id_range) == sizeof(atp::IdRange) &&
                  offsetof(na_id_range, last) == offsetof(atp::IdRange, last));
    out->n_delivered_ranges = static_cast<uint32_t>(g.delivered_ranges.size());
    out->n_lost_ranges = static_cast<uint32_t>(g.lost_ranges.size());
    out->delivered_ranges =
        g.delivered_ranges.empty() ? nullptr : reinterpret_cast<const na_id_range*>(g.delivered_ranges.data());
    out->lost_ranges = g.lost_ranges.empty() ? nullptr : reinterpret_cast<const na_id_range*>(g.lost_ranges.data());
    return NA_OK;
  });
}

NA_API int na_report_free(na_report* r) {
  if (!r) return NA_OK;
  {
    std::lock_guard<std::mutex> lk(reg_mu());
    if (reports().erase(r) == 0) return NA_ERR_CLOSED_HANDLE;
  }
  delete r;
  return NA_OK;
}

NA_API int na_engine_stats(na_engine* eng, na_stats* out) {
  return guarded([&]() -> int {
    auto box = lookup(eng);
    if (!box) return NA_ERR_CLOSED_HANDLE;
    if (!out) return NA_ERR_INVALID_ARGUMENT;
    atp::EngineStats e = box->driver->engine_stats();
    drv::DriverStats d = box->driver->driver_stats();
    memset(out, 0, sizeof *out);
    out->datagrams_in = e.datagrams_in;
    out->datagrams_out = e.datagrams_out;
    out->bytes_in = e.bytes_in;
    out->bytes_out = e.bytes_out;
    out->dropped_malformed = e.dropped_malformed;
    out->dropped_unknown_session = e.dropped_unknown_session;
    out->dropped_auth = e.dropped_auth;
    out->dropped_replay_or_old = e.dropped_replay_or_old;
    out->dropped_no_buffer = e.dropped_no_buffer;
    out->dropped_unknown_job = e.dropped_unknown_job;
    out->dropped_fault_in = e.dropped_fault_in;
    out->dropped_fault_out = e.dropped_fault_out;
    out->events_dropped = e.events_dropped;
    out->auth_policy_mismatches = e.auth_policy_mismatches;
    out->farewells_dropped = e.farewells_dropped;
    out->sessions = e.sessions;
    out->jobs = e.jobs;
    out->recv_syscalls = d.recv_syscalls;
    out->send_syscalls = d.send_syscalls;
    out->udp_datagrams_received = d.datagrams_received;
    out->udp_datagrams_sent = d.datagrams_sent;
    out->gro_buffers = d.gro_buffers;
    out->gso_sends = d.gso_sends;
    out->send_errors = d.send_errors;
    out->send_eagain = d.send_eagain;
    out->recv_errors = d.recv_errors;
    out->recv_truncated = d.recv_truncated;
    out->peer_evictions = d.peer_evictions;
    out->unknown_peer_transmits = d.unknown_peer_transmits;
    out->wakeups = d.wakeups;
    out->loop_iterations = d.loop_iterations;
    out->gso_enabled = d.gso_enabled ? 1 : 0;
    out->gro_enabled = d.gro_enabled ? 1 : 0;
    return NA_OK;
  });
}

NA_API const char* na_strerror(int c) {
  switch (c) {
    case NA_OK: return "NA_OK";
    case NA_ERR_INVALID_ARGUMENT: return "NA_ERR_INVALID_ARGUMENT";
    case NA_ERR_NOT_FOUND: return "NA_ERR_NOT_FOUND";
    case NA_ERR_ALREADY_EXISTS: return "NA_ERR_ALREADY_EXISTS";
    case NA_ERR_WOULD_BLOCK: return "NA_ERR_WOULD_BLOCK";
    case NA_ERR_LIMIT_EXCEEDED: return "NA_ERR_LIMIT_EXCEEDED";
    case NA_ERR_CLOSED: return "NA_ERR_CLOSED";
    case NA_ERR_PEER_DEAD: return "NA_ERR_PEER_DEAD";
    case NA_ERR_IDLE_TIMEOUT: return "NA_ERR_IDLE_TIMEOUT";
    case NA_ERR_PROTOCOL: return "NA_ERR_PROTOCOL";
    case NA_ERR_INTERNAL: return "NA_ERR_INTERNAL";
    case NA_ERR_CLOSED_HANDLE: return "NA_ERR_CLOSED_HANDLE";
    case NA_ERR_SYSTEM: return "NA_ERR_SYSTEM";
    case NA_ERR_ADDRESS: return "NA_ERR_ADDRESS";
    case NA_ERR_BUFFER_TOO_SMALL: return "NA_ERR_BUFFER_TOO_SMALL";
    default: return "NA_ERR_UNKNOWN";
  }
}

NA_API const char* na_version(void) { return "0.1.0"; }

}  // extern "C"

namespace netapprox::capi {

int poll_events_visit(na_engine* eng, int max, int timeout_ms, EventSink sink, void* ctx) {
  return guarded([&]() -> int {
    auto box = lookup(eng);
    if (!box) return NA_ERR_CLOSED_HANDLE;
    if (!sink || max <= 0) return NA_ERR_INVALID_ARGUMENT;
    int i = 0;
    const int n = box->driver->visit_events(std::min(max, 1024), timeout_ms, [&](atp::Event& e) {
      na_event o;
      memset(&o, 0, sizeof o);
      o.type = static_cast<int32_t>(e.type);
      o.status = static_cast<int32_t>(e.status);
      o.session = e.session;
      o.job = e.job;
      o.message = e.message;
      o.group_id = e.group_id;
      o.data = e.data;
      o.len = e.len;
      o.handle = e.handle;
      if (e.type == atp::EventType::kJobDone && e.report) {
        na_report* r = new (std::nothrow) na_report{e.report};
        if (r) {
          std::lock_guard<std::mutex> lk(reg_mu());
          reports().insert(r);
        }
        o.report = r;  // NULL only when out of memory
      }
      if (e.type == atp::EventType::kEpoch) {
        o.epoch_at_ns = e.epoch.at;
        o.epoch_tlr = e.epoch.tlr;
        o.epoch_loss = e.epoch.loss;
        o.epoch_rate_bps = e.epoch.rate_bps;
        o.epoch_priority_class = e.epoch.priority_class;
      }
      sink(ctx, i++, o);
    });
    return n;  // or a negative status (NA_ERR_CLOSED)
  });
}

}  // namespace netapprox::capi
