// incast-sim: rate laws and queue plans on the simulated incast fabric (native/tests/core/fabric.hpp), with a fake
// clock, so every number is reproducible (seeded) and independent of the machine's load.
//
//   incast-sim [--senders 3,8,16,32] [--msgs 300] [--size 200] [--msr 0.75] [--modes full,paper]
//              [--queues slack,fifo] [--port-mbps 200] [--host-mbps 200] [--rtt-us 100] [--jobs 1]
//              [--load 0] [--seed 1] [--bg-load 0] [--bg-on-us 2000] [--exact-every 0]
//              [--needy 0.75] [--session-per-job 0] [--mrdf-across 1] [--repair-after 2]
//              [--needy-repairing-only 1] [--small-class0-bytes 0]
//              [--workload fixed|fbhd|fbkv] [--total-jobs 0] [--msrs 0.5,0.75,0.9]
//              [--trace epochs.csv]
//
// Each sender runs --jobs jobs of --msgs messages of --size bytes to the receiver. --load 0: all jobs start together
// (synchronised incast); --load L > 0: Poisson arrivals at L x the port rate, senders picked at random. Prints one
// line per (mode, queue, senders): JCT p50/p99 in ms and over the ideal (MSR x job bytes / port rate + base RTT, a
// job alone on the path), packet loss seen by the senders, bytes sent over the bytes the targets needed, port
// utilisation while jobs ran, drops per class. --bg-load B: an exact background in class 0, bursts of --bg-on-us at
// the port's rate averaging B of the port (fabric.hpp), as the network lab's class-0 TCP background (which arrives
// as ~6 ms bursts every ~18 ms, iperf3 -b's 128 KB writes at the line rate: --bg-on-us 6000 models it; docs/protocol.md
// section 17 item 6).
// --exact-every K: every K-th job is exact (MSR 1, class 0) and the line adds the exact jobs' p50 and the approximate
// ones' separately (the network lab's co-run experiment: exact jobs next to approximate ones). --needy F: the
// engines' needy_class0_fraction (docs/protocol.md section 11; 0 = the paper's classes for needy jobs).
// --session-per-job 1: every job in a session of its own (opened at its start, closed when it ends), as the network
// lab's agents do; 0: one session per sender. --mrdf-across 0|1: EngineConfig::mrdf_across_jobs (docs/protocol.md
// section 6: the host's line rate to the job with the least remaining data across sessions, in the MRDF modes).
// --needy-repairing-only 0|1: EngineConfig::needy_repairing_jobs_only (0 = every job out of slack may be needy).
// --small-class0-bytes B: EngineConfig::small_job_class0_bytes (size-aware class: a Full job that needs at most B more
// bytes sends in class 0; docs/protocol.md section 11, "small jobs"; 0 = off).
// --repair-after K: EngineConfig::repair_after_segments (docs/protocol.md section 5: a lost segment of a message with
// at least K segments sent is repaired, not given up, while its group has allowance; 0 = the paper's rule). The line
// then adds what losses cost: `gaveup` = segments sent for messages later given up for a loss over all DATA packets
// sent, `sat` = the same for messages given up unfinished because the group met its target, `repairs/job` = lost
// segments repaired within the allowance per job.
// --workload fbhd (with --load > 0): the network lab's FBHD jobs (benchmarks/netlab/netlab/workload.py): 40-160
// messages per job, sizes lognormal (median 24 KiB, sigma 1, clamped to 1 KiB..1 MiB), each message produced an
// exponential gap (mean 500 us) after the previous one (submitted then, not all at the job's start), arrivals Poisson
// at --load x the port rate of the mean job's bytes; --total-jobs N jobs in all (0: --jobs x senders), senders dealt
// in blocks of S in a shuffled order and MSRs round-robin over --msrs, as the lab deals them. The line then adds
// p50 of the MSR-0.75 jobs (--produce 0: every message ready at the job's start, the same draws otherwise) (`p50@.75`,
// the lab's verdict cells) and the drops per class. The lab's background:
// --bg-load 0.3 --bg-on-us 6000 (62.5 Mbit/s delivered on both switches, phases.csv of e8l).
// --workload fbkv: the same with the lab's FBKV jobs (workload.py, _fbkv_job): 200-800 messages of GEV key +
// generalized-Pareto value bytes (16 B..64 KiB, mean ~330 B), produced a generalized-Pareto gap (mean ~19 us) apart.
// --exact-only 1 (with --exact-every K): only the exact jobs of the same plan run (the co-run's exact jobs alone, the
// network lab's corun_alone phase).
// --session-lead-ms L (with --session-per-job 1): each job's session opens L ms before the job starts, as the lab's
// agents set sessions up 1 s ahead (0: at the start).
// --wake-us W: the senders' drivers wake late, an exponential W us (mean) after each poll (fabric.hpp
// sender_wake_mean; the lab's user-space agents on a loaded 2-core machine); 0: exact.
// --trace FILE: every sender's end-of-epoch samples (rate, rho, TLR, class, delivered rate, srtt, app-limited) as CSV.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fabric.hpp"

using namespace netapprox::atp;

namespace {

constexpr TimeNs kMs = 1'000'000;

template <class T>
std::vector<T> list(const char* s, T (*conv)(const std::string&)) {
  std::vector<T> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(conv(item));
  return out;
}
int to_int(const std::string& s) { return std::stoi(s); }
std::string to_str(const std::string& s) { return s; }

double pct(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(std::ceil(p * double(v.size())) - 1));
  return v[i];
}

struct Options {
  std::vector<int> senders{3, 8, 16, 32};
  uint32_t msgs = 300, size = 200;
  double msr = 0.75;
  std::vector<std::string> modes{"full", "paper"};
  std::vector<std::string> queues{"slack", "fifo"};
  double port_mbps = 200, host_mbps = 200;
  TimeNs rtt_us = 100;
  int jobs = 1;
  double load = 0;
  uint64_t seed = 1;
  double bg_load = 0;
  TimeNs bg_on_us = 2000;
  int exact_every = 0;
  double needy = EngineConfig{}.needy_class0_fraction;
  std::string trace;
  bool session_per_job = false;
  bool mrdf_across = EngineConfig{}.mrdf_across_jobs;
  uint32_t repair_after = EngineConfig{}.repair_after_segments;
  bool needy_repairing_only = EngineConfig{}.needy_repairing_jobs_only;
  uint64_t small_class0_bytes = EngineConfig{}.small_job_class0_bytes;
  std::string workload = "fixed";
  int total_jobs = 0;
  std::vector<double> msrs{0.5, 0.75, 0.9};
  bool produce = true;
  bool exact_only = false;
  TimeNs session_lead_ms = 0;
  TimeNs wake_us = 0;
};

FILE* g_trace = nullptr;

struct JobPlan {
  int sender;
  TimeNs start;
  JobId id;
  double msr = 0;               // fbhd: this job's MSR (fixed: --msr)
  std::vector<uint32_t> sizes;  // fbhd: message sizes (fixed: --msgs x --size)
  std::vector<TimeNs> offsets;  // fbhd: production time of each message from the job's start
};

// The lab's FBHD job (benchmarks/netlab/netlab/workload.py, _fbhd_job), drawn from this simulator's generator.
void fbhd_job(std::mt19937_64& rng, JobPlan* p, bool produce = true) {
  const int n = std::uniform_int_distribution<int>(40, 160)(rng);
  std::lognormal_distribution<double> size(std::log(24.0 * 1024), 1.0);
  std::exponential_distribution<double> gap(1.0 / 500.0);  // microseconds
  double t = 0;
  for (int i = 0; i < n; ++i) {
    p->sizes.push_back(uint32_t(std::min(std::max(size(rng), 1024.0), double(1 << 20))));
    p->offsets.push_back(produce ? TimeNs(t * 1000) : 0);
    t += gap(rng);
  }
}

// The lab's FBKV job (workload.py, _fbkv_job): 200-800 messages of key + value bytes (GEV + generalized Pareto, the
// ETC pool's fit), clamped to 16 B..64 KiB, produced a generalized-Pareto gap (mean ~19 us) after the previous one.
double gpd(std::mt19937_64& rng, double sigma, double xi) {
  const double u = std::uniform_real_distribution<double>(0, 1)(rng);
  return sigma * (std::pow(1 - u, -xi) - 1) / xi;
}
void fbkv_job(std::mt19937_64& rng, JobPlan* p, bool produce = true) {
  const int n = std::uniform_int_distribution<int>(200, 800)(rng);
  double t = 0;
  for (int i = 0; i < n; ++i) {
    const double u = std::clamp(std::uniform_real_distribution<double>(0, 1)(rng), 1e-12, 1 - 1e-12);
    const double key = 30.7984 + 8.20449 * (std::pow(-std::log(u), -0.078688) - 1) / 0.078688;
    const double v = gpd(rng, 214.476, 0.348238) + key;
    p->sizes.push_back(uint32_t(std::min(std::max(v, 16.0), 65536.0)));
    p->offsets.push_back(produce ? TimeNs(t * 1000) : 0);
    t += gpd(rng, 16.0292, 0.154971);
  }
}

void run(const Options& o, const std::string& mode, const std::string& queue, int n) {
  fabric::Config c;
  c.senders = n;
  c.host_rate_bps = o.host_mbps * 1e6;
  c.port_rate_bps = o.port_mbps * 1e6;
  c.host_delay = o.rtt_us * 1000 / 4;
  c.slack_queues = queue == "slack";
  c.bg_load = o.bg_load;
  c.bg_on = o.bg_on_us * 1000;
  c.sender_wake_mean = o.wake_us * 1000;
  c.engine.line_rate_bps = static_cast<uint64_t>(c.host_rate_bps);
  c.engine.mode = *parse_mode(mode);
  c.engine.needy_class0_fraction = o.needy;
  c.engine.mrdf_across_jobs = o.mrdf_across;
  c.engine.repair_after_segments = o.repair_after;
  c.engine.needy_repairing_jobs_only = o.needy_repairing_only;
  c.engine.small_job_class0_bytes = o.small_class0_bytes;
  c.engine.peer_death_timeout = 20'000'000'000ULL;
  fabric::Fabric f(c, o.seed);
  // The plan: who sends which job when.
  std::mt19937_64 rng(o.seed);
  std::vector<JobPlan> plan;
  const double job_bytes = double(o.msgs) * o.size;
  const double ideal_ms = (o.msr * job_bytes * 8 / c.port_rate_bps) * 1e3 + double(o.rtt_us) / 1e3;
  TimeNs t = f.now();
  JobId next_id = 1;
  // The lab's generators (fbhd, fbkv): jobs of their own sizes and production times, MSRs round-robin.
  const bool fbhd = o.workload == "fbhd" || o.workload == "fbkv";
  auto lab_job = o.workload == "fbkv" ? fbkv_job : fbhd_job;
  if (fbhd) {
    // Mean job bytes of this generator (a separate stream, so the plan's draws do not depend on it).
    std::mt19937_64 mrng(99);
    double mean_b = 0;
    for (int i = 0; i < 400; ++i) {
      JobPlan q{};
      lab_job(mrng, &q, true);
      for (uint32_t b : q.sizes) mean_b += b / 400.0;
    }
    const double mean_gap_s = mean_b * 8 / (std::max(o.load, 1e-3) * c.port_rate_bps);
    const int total = o.total_jobs > 0 ? o.total_jobs : o.jobs * n;
    std::mt19937_64 placement(o.seed * 7919 + 17);
    std::vector<int> order;
    for (int i = 0; i < total; ++i) {
      if (order.empty()) {
        for (int s = 0; s < n; ++s) order.push_back(s);
        std::shuffle(order.begin(), order.end(), placement);
      }
      JobPlan p{order.back(), t, next_id++, o.msrs[size_t(i) % o.msrs.size()], {}, {}};
      order.pop_back();
      lab_job(rng, &p, o.produce);
      plan.push_back(std::move(p));
      t += TimeNs(std::exponential_distribution<double>(1.0 / mean_gap_s)(rng) * 1e9);
    }
  }
  for (int j = 0; j < (fbhd ? 0 : o.jobs); ++j) {
    for (int s = 0; s < n; ++s) {
      if (o.load > 0) {
        const double mean_gap_s = job_bytes * 8 / (o.load * c.port_rate_bps);
        t += TimeNs(std::exponential_distribution<double>(1.0 / mean_gap_s)(rng) * 1e9);
        plan.push_back({int(rng() % n), t, next_id++, o.msr, {}, {}});
      } else {
        plan.push_back({s, f.now() + TimeNs(j) * 0, next_id++, o.msr, {}, {}});
      }
    }
  }
  std::vector<double> jct_ms, exact_ms, approx_ms, jct75_ms;
  std::map<JobId, const JobPlan*> by_id;
  for (const auto& p : plan) by_id[p.id] = &p;
  auto is_exact = [&](JobId id) { return o.exact_every > 0 && (id - 1) % JobId(o.exact_every) == 0; };
  double sent_bytes = 0, needed_bytes = 0, lost_pkts = 0, resolved_pkts = 0;
  uint64_t failed = 0, below = 0;
  double announces = 0, repeated = 0, start_wait_ms = 0;
  double gaveup_segs = 0, sat_segs = 0, repairs = 0;
  size_t done = 0;
  auto session_for = [&](int sender, JobId id) {
    return o.session_per_job ? SessionId(0x7000'0000 + id) : fabric::Fabric::session_of(sender);
  };
  const TimeNs t0 = f.now();
  if (g_trace)
    for (int s = 0; s < n; ++s) f.sender(s).set_trace_epochs(true);
  f.on_sender_event = [&](int s, Event& e) {
    if (e.type == EventType::kEpoch && g_trace) {
      const auto& x = e.epoch;
      std::fprintf(g_trace, "%s,%s,%d,%d,%llu,%.3f,%.4f,%.4f,%.2f,%.2f,%d,%llu,%llu,%.3f,%d\n", mode.c_str(),
                   queue.c_str(), n, s, (unsigned long long)e.job, double(x.at - t0) / 1e6, x.tlr, x.loss,
                   x.rate_bps / 1e6, x.delivered_bps / 1e6, x.priority_class, (unsigned long long)x.acked,
                   (unsigned long long)x.lost, double(x.srtt) / 1e6, x.app_limited ? 1 : 0);
      return;
    }
    if (e.type != EventType::kJobDone || !e.report) return;
    done++;
    if (o.session_per_job) f.sender(s).close_session(e.session, f.now());
    const auto& r = *e.report;
    if (r.status != Status::kOk) failed++;
    const JobPlan& jp = *by_id.at(e.job);
    const uint32_t msgs = jp.sizes.empty() ? o.msgs : uint32_t(jp.sizes.size());
    const double msr = is_exact(e.job) ? 1.0 : jp.msr;
    if (r.delivered < static_cast<uint32_t>(std::ceil(msr * msgs - 1e-9))) below++;
    jct_ms.push_back(double(r.finished - r.started) / 1e6);
    if (std::fabs(msr - 0.75) < 1e-9) jct75_ms.push_back(jct_ms.back());
    (is_exact(e.job) ? exact_ms : approx_ms).push_back(jct_ms.back());
    if (jp.sizes.empty()) {
      sent_bytes += double(r.packets_sent) * std::min<uint32_t>(o.size, c.engine.max_datagram - 60);
      needed_bytes += std::ceil(msr * o.msgs - 1e-9) * o.size;
    }
    resolved_pkts += double(r.packets_sent);
    lost_pkts += r.measured_loss * double(r.packets_sent);
    announces += r.announces_sent;
    repeated += r.announces_sent > 1;
    start_wait_ms += double(r.start_to_running) / 1e6;
    gaveup_segs += double(r.segments_given_up_for_loss);
    sat_segs += double(r.segments_given_up_satisfied);
    repairs += double(r.repairs_within_allowance);
  };
  std::sort(plan.begin(), plan.end(), [](const JobPlan& a, const JobPlan& b) { return a.start < b.start; });
  std::vector<uint8_t> payload(std::max<uint32_t>(o.size, 1u << 20), 0x5a);
  // Every job's start and each of its messages' production, in time order.
  struct Submit {
    TimeNs at;
    const JobPlan* p;
    int index;  // -1: start the job, -2: open its session (--session-lead-ms before the start)
  };
  std::vector<Submit> events;
  for (const auto& p : plan) {
    if (o.exact_only && !is_exact(p.id)) continue;
    if (o.session_per_job && o.session_lead_ms > 0)
      events.push_back({p.start > o.session_lead_ms * kMs ? p.start - o.session_lead_ms * kMs : 0, &p, -2});
    events.push_back({p.start, &p, -1});
    for (size_t i = 0; i < p.offsets.size(); ++i) events.push_back({p.start + p.offsets[i], &p, int(i)});
  }
  std::stable_sort(events.begin(), events.end(), [](const Submit& a, const Submit& b) { return a.at < b.at; });
  std::vector<bool> started(plan.size() + 2, false), opened(plan.size() + 2, false);
  for (const auto& ev : events) {
    const JobPlan& p = *ev.p;
    f.run([] { return false; }, ev.at);
    Engine& e = f.sender(p.sender);
    const SessionId sid = session_for(p.sender, p.id);
    if (ev.index == -2) {
      opened[p.id] = f.open_extra_session(p.sender, sid) == Status::kOk;
      continue;
    }
    if (ev.index >= 0) {
      if (started[p.id]) e.submit(sid, p.id, 0, uint32_t(ev.index), payload.data(), p.sizes[ev.index], f.now());
      continue;
    }
    const uint32_t msgs = p.sizes.empty() ? o.msgs : uint32_t(p.sizes.size());
    JobSpec spec{p.id, {{1, msgs, is_exact(p.id) ? 1.0 : p.msr}}, true};
    if ((o.session_per_job && !opened[p.id] && f.open_extra_session(p.sender, sid) != Status::kOk) ||
        e.start_job(sid, spec, f.now()) != Status::kOk) {
      failed++;
      continue;
    }
    started[p.id] = true;
    if (p.sizes.empty())
      for (uint32_t i = 0; i < o.msgs; ++i) e.submit(sid, p.id, 0, i, payload.data(), o.size, f.now());
  }
  const size_t planned = size_t(
      std::count_if(plan.begin(), plan.end(), [&](const JobPlan& p) { return !o.exact_only || is_exact(p.id); }));
  f.run([&] { return done == planned; }, f.now() + 120'000 * kMs);
  const double span = double(f.now() - t0);
  const auto& port = f.port();
  std::printf(
      "%-7s %-5s %3d  jobs %3zu/%3zu  p50 %8.2f ms (%5.2fx)  p99 %8.2f ms (%5.2fx)  loss %.3f  sent/needed %.2f  "
      "util %.2f  drops",
      mode.c_str(), queue.c_str(), n, done, planned, pct(jct_ms, 0.5), pct(jct_ms, 0.5) / ideal_ms, pct(jct_ms, 0.99),
      pct(jct_ms, 0.99) / ideal_ms, resolved_pkts > 0 ? lost_pkts / resolved_pkts : 0.0,
      needed_bytes > 0 ? sent_bytes / needed_bytes : 0.0, double(port.busy) / span);
  for (int k = 0; k < kNumPriorityClasses; ++k)
    if (port.dropped[k])
      std::printf(" c%d:%llu/%llu", k, (unsigned long long)port.dropped[k],
                  (unsigned long long)(port.dropped[k] + port.enqueued[k]));
  if (o.exact_every > 0) std::printf("  exact p50 %.2f approx p50 %.2f", pct(exact_ms, 0.5), pct(approx_ms, 0.5));
  if (!jct75_ms.empty()) std::printf("  p50@.75 %.2f p99@.75 %.2f", pct(jct75_ms, 0.5), pct(jct75_ms, 0.99));
  uint64_t slots = 0, contended = 0, starved = 0;
  for (int s = 0; s < n; ++s) {
    const EngineStats es = f.sender(s).stats();
    slots += es.mrdf_slots;
    contended += es.mrdf_contended;
    starved += es.mrdf_starved;
  }
  if (c.engine.mrdf_across_jobs && mode_flags(c.engine.mode).mrdf)
    std::printf("  mrdf slots %llu contended %llu starved %llu", (unsigned long long)slots,
                (unsigned long long)contended, (unsigned long long)starved);
  std::printf("  failed %llu below %llu  announces/job %.2f repeated %.0f start %.2f ms", (unsigned long long)failed,
              (unsigned long long)below, done ? announces / double(done) : 0.0, repeated,
              done ? start_wait_ms / double(done) : 0.0);
  std::printf("  gaveup %.3f sat %.3f repairs/job %.1f\n", resolved_pkts > 0 ? gaveup_segs / resolved_pkts : 0.0,
              resolved_pkts > 0 ? sat_segs / resolved_pkts : 0.0, done ? repairs / double(done) : 0.0);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const char* v = argv[i + 1];
    if (k == "--senders")
      o.senders = list<int>(v, to_int);
    else if (k == "--msgs")
      o.msgs = std::atoi(v);
    else if (k == "--size")
      o.size = std::atoi(v);
    else if (k == "--msr")
      o.msr = std::atof(v);
    else if (k == "--modes")
      o.modes = list<std::string>(v, to_str);
    else if (k == "--queues")
      o.queues = list<std::string>(v, to_str);
    else if (k == "--port-mbps")
      o.port_mbps = std::atof(v);
    else if (k == "--host-mbps")
      o.host_mbps = std::atof(v);
    else if (k == "--rtt-us")
      o.rtt_us = std::atoi(v);
    else if (k == "--jobs")
      o.jobs = std::atoi(v);
    else if (k == "--load")
      o.load = std::atof(v);
    else if (k == "--bg-load")
      o.bg_load = std::atof(v);
    else if (k == "--bg-on-us")
      o.bg_on_us = std::strtoull(v, nullptr, 10);
    else if (k == "--needy")
      o.needy = std::atof(v);
    else if (k == "--exact-every")
      o.exact_every = std::atoi(v);
    else if (k == "--seed")
      o.seed = std::strtoull(v, nullptr, 10);
    else if (k == "--session-per-job")
      o.session_per_job = std::atoi(v) != 0;
    else if (k == "--mrdf-across")
      o.mrdf_across = std::atoi(v) != 0;
    else if (k == "--needy-repairing-only")
      o.needy_repairing_only = std::atoi(v) != 0;
    else if (k == "--small-class0-bytes")
      o.small_class0_bytes = std::strtoull(v, nullptr, 10);
    else if (k == "--repair-after")
      o.repair_after = static_cast<uint32_t>(std::atoi(v));
    else if (k == "--workload")
      o.workload = v;
    else if (k == "--wake-us")
      o.wake_us = std::strtoull(v, nullptr, 10);
    else if (k == "--session-lead-ms")
      o.session_lead_ms = std::strtoull(v, nullptr, 10);
    else if (k == "--exact-only")
      o.exact_only = std::atoi(v) != 0;
    else if (k == "--produce")
      o.produce = std::atoi(v) != 0;
    else if (k == "--total-jobs")
      o.total_jobs = std::atoi(v);
    else if (k == "--msrs")
      o.msrs = list<double>(v, [](const std::string& x) { return std::stod(x); });
    else if (k == "--trace")
      o.trace = v;
    else {
      std::fprintf(stderr, "incast-sim: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  for (const auto& m : o.modes) {
    if (!parse_mode(m)) {
      std::fprintf(stderr, "incast-sim: unknown mode %s\n", m.c_str());
      return 2;
    }
  }
  std::printf(
      "# %u messages x %u B, MSR %.2f, port %.0f Mbit/s, hosts %.0f Mbit/s, base RTT %llu us, %d job(s) per "
      "sender, load %.2f, class-0 background %.2f (bursts of %llu us), needy_class0_fraction %.2f, session per %s, "
      "mrdf_across_jobs %d, repair_after_segments %u, needy_repairing_jobs_only %d, small_job_class0_bytes %llu\n",
      o.msgs, o.size, o.msr, o.port_mbps, o.host_mbps, (unsigned long long)o.rtt_us, o.jobs, o.load, o.bg_load,
      (unsigned long long)o.bg_on_us, o.needy, o.session_per_job ? "job" : "sender", o.mrdf_across ? 1 : 0,
      o.repair_after, o.needy_repairing_only ? 1 : 0, (unsigned long long)o.small_class0_bytes);
  if (!o.trace.empty()) {
    g_trace = std::fopen(o.trace.c_str(), "w");
    if (!g_trace) {
      std::fprintf(stderr, "incast-sim: cannot write %s\n", o.trace.c_str());
      return 2;
    }
    std::fprintf(g_trace,
                 "mode,queue,senders,sender,job,t_ms,tlr,rho,rate_mbps,delivered_mbps,class,acked,lost,srtt_ms,"
                 "app_limited\n");
  }
  for (const auto& m : o.modes)
    for (const auto& q : o.queues)
      for (int n : o.senders) run(o, m, q, n);
  if (g_trace) std::fclose(g_trace);
}
