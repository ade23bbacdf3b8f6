// Submit cost, one message per call (na_job_submit_wait) vs na_job_submit_batch, measured in one run.
//
//   native/build/submit-batch-bench [messages_per_job=20000] [size=100] [batch=64] [rounds=10]
//
// Two engines over 127.0.0.1. Each round starts one exact job of `messages_per_job` messages and times only the
// submitting thread (ns per message: the C API call, the engine lock, the copy into the send buffer, the I/O
// thread's wake-up), then waits until the receiver has the whole job, so every round starts with an empty send
// buffer. Rounds alternate single / batched so that machine load hits both alike; the ratio printed is of the
// medians. End-to-end messages/s per round (submit + delivery) are printed too. The I/O and receive threads share
// the machine with the submitter: numbers from a shared machine say so.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "netapprox/netapprox.h"

namespace {

using Clock = std::chrono::steady_clock;

na_engine* open_engine() {
  na_config cfg;
  na_config_init(&cfg);
  snprintf(cfg.bind_address, sizeof cfg.bind_address, "127.0.0.1");
  cfg.line_rate_bps = 40'000'000'000ULL;
  na_engine* e = nullptr;
  char err[256];
  if (na_engine_open(&cfg, &e, err, sizeof err) != NA_OK) {
    fprintf(stderr, "na_engine_open: %s\n", err);
    exit(1);
  }
  return e;
}

// Drains an engine's events until `jobs_done` JOB_DONE events were seen in total (or stop): releases messages.
void pump(na_engine* e, std::atomic<uint64_t>* jobs_done, const std::atomic<bool>* stop) {
  na_event ev[256];
  std::vector<uint64_t> handles;
  while (!stop->load()) {
    const int n = na_poll_events(e, ev, 256, 20);
    if (n < 0) return;
    handles.clear();
    for (int i = 0; i < n; ++i) {
      if (ev[i].type == NA_EVENT_MESSAGE) handles.push_back(ev[i].handle);
      if (ev[i].type == NA_EVENT_JOB_DONE) {
        na_report_free(ev[i].report);
        jobs_done->fetch_add(1);
      }
    }
    if (!handles.empty()) na_message_release_batch(e, handles.data(), handles.size());
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const uint32_t n = argc > 1 ? static_cast<uint32_t>(atoi(argv[1])) : 20000;
  const size_t size = argc > 2 ? static_cast<size_t>(atoi(argv[2])) : 100;
  const uint32_t batch = argc > 3 ? static_cast<uint32_t>(atoi(argv[3])) : 64;
  const int rounds = argc > 4 ? atoi(argv[4]) : 10;
  if (n == 0 || size == 0 || batch == 0 || batch > NA_SUBMIT_BATCH_MAX || rounds <= 0) {
    fprintf(stderr, "usage: %s [messages_per_job>0] [size>0] [batch in 1..%d] [rounds>0]\n", argv[0],
            NA_SUBMIT_BATCH_MAX);
    return 2;
  }
  na_engine* a = open_engine();
  na_engine* b = open_engine();
  uint8_t key[32];
  for (int i = 0; i < 32; ++i) key[i] = static_cast<uint8_t>(i + 1);
  const uint64_t sid = 0xbe7c4ULL;
  if (na_session_open(a, sid, key, "127.0.0.1", static_cast<uint16_t>(na_engine_local_port(b)), 1) != NA_OK ||
      na_session_open(b, sid, key, "127.0.0.1", static_cast<uint16_t>(na_engine_local_port(a)), 0) != NA_OK) {
    fprintf(stderr, "session open failed\n");
    return 1;
  }
  std::atomic<uint64_t> rx_done{0}, tx_done{0};
  std::atomic<bool> stop{false};
  std::thread rx(pump, b, &rx_done, &stop);
  std::thread tx(pump, a, &tx_done, &stop);

  std::vector<uint8_t> msg(size);
  for (size_t i = 0; i < size; ++i) msg[i] = static_cast<uint8_t>(i * 7 + 1);
  std::vector<na_submit_entry> entries(batch);
  std::vector<double> single_ns, batch_ns, single_rate, batch_rate;
  uint32_t job = 0;
  int failures = 0;
  // Round 0 of each kind warms up (page faults, pools) and is not counted.
  for (int r = 0; r < 2 * (rounds + 1); ++r) {
    const bool batched = r % 2 == 1;
    ++job;
    na_group_spec g{1, n, 1.0};
    if (na_job_start(a, sid, job, &g, 1, 1) != NA_OK) {
      fprintf(stderr, "job start failed\n");
      return 1;
    }
    const uint64_t want = rx_done.load() + 1;
    const auto t0 = Clock::now();
    if (!batched) {
      for (uint32_t i = 0; i < n; ++i) {
        const int rc = na_job_submit_wait(a, sid, job, 0, i, msg.data(), msg.size(), -1);
        if (rc != NA_OK) {
          ++failures;
          break;
        }
      }
    } else {
      for (uint32_t i = 0; i < n; i += batch) {
        const uint32_t k = std::min(batch, n - i);
        for (uint32_t j = 0; j < k; ++j) entries[j] = na_submit_entry{0, i + j, msg.data(), msg.size(), 0};
        const int rc = na_job_submit_batch(a, sid, job, entries.data(), k, -1);
        if (rc != static_cast<int>(k)) {
          ++failures;
          break;
        }
      }
    }
    const auto t1 = Clock::now();
    while (rx_done.load() < want) std::this_thread::sleep_for(std::chrono::microseconds(200));
    const auto t2 = Clock::now();
    const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
    const double rate = n / std::chrono::duration<double>(t2 - t0).count();
    printf("round %2d %-7s submit %7.1f ns/msg  end-to-end %9.0f msg/s%s\n", r / 2, batched ? "batch" : "single", ns,
           rate, r < 2 ? "  (warm-up)" : "");
    if (r >= 2) {
      (batched ? batch_ns : single_ns).push_back(ns);
      (batched ? batch_rate : single_rate).push_back(rate);
    }
  }
  stop = true;
  rx.join();
  tx.join();
  na_engine_close(a);
  na_engine_close(b);
  const double s = median(single_ns), bt = median(batch_ns);
  printf(
      "{\"messages_per_job\": %u, \"size\": %zu, \"batch\": %u, \"rounds\": %d, \"single_ns_per_msg\": %.1f, "
      "\"batch_ns_per_msg\": %.1f, \"submit_speedup\": %.2f, \"single_msgs_per_s\": %.0f, \"batch_msgs_per_s\": "
      "%.0f, \"end_to_end_ratio\": %.2f, \"failures\": %d}\n",
      n, size, batch, rounds, s, bt, bt > 0 ? s / bt : 0, median(single_rate), median(batch_rate),
      median(single_rate) > 0 ? median(batch_rate) / median(single_rate) : 0, failures);
  return failures ? 1 : 0;
}
