// na_job_submit_batch (issue 11): several messages of one job in one call.
//  * Arguments are checked: closed handles, NULL entries, more than NA_SUBMIT_BATCH_MAX entries, and an entry
//    with NULL data stops the batch there with its status set (the prefix before it is submitted).
//  * The result is always an accepted prefix: a full send buffer with timeout 0 accepts some and marks the first
//    refused entry NA_ERR_WOULD_BLOCK; the rest go in a later call.
//  * Every message is copied before the call returns: each batch's buffers are scribbled over and freed right
//    after it (under the ASan build an engine that kept a pointer aborts), and the receiver checks every byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "capi_fixture.hpp"
#include "netapprox/netapprox.h"

namespace {

using capi_fixture::loopback_config;
using capi_fixture::Pair;

uint8_t pattern(uint32_t msg, size_t i) { return static_cast<uint8_t>(msg * 13 + i * 5 + 3); }

// Drains the receiver until its JOB_DONE (and the sender's): checks every delivered byte, counts messages.
struct Drained {
  uint32_t messages = 0;
  uint32_t bad = 0;
  uint32_t report_delivered = 0;
  bool sender_ok = false;
};

Drained drain(Pair& p, const std::vector<size_t>& sizes) {
  Drained d;
  na_report* rrep = nullptr;
  na_report* srep = nullptr;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  na_event ev[64];
  std::vector<uint64_t> handles;
  while ((!rrep || !srep) && std::chrono::steady_clock::now() < deadline) {
    int n = na_poll_events(p.b, ev, 64, 20);
    EXPECT_GE(n, 0);
    handles.clear();
    for (int i = 0; i < n; ++i) {
      if (ev[i].type == NA_EVENT_MESSAGE) {
        ++d.messages;
        const uint32_t m = ev[i].message;
        if (m >= sizes.size() || ev[i].len != sizes[m]) {
          ++d.bad;
        } else {
          for (size_t k = 0; k < ev[i].len; ++k)
            if (ev[i].data[k] != pattern(m, k)) {
              ++d.bad;
              break;
            }
        }
        handles.push_back(ev[i].handle);
      }
      if (ev[i].type == NA_EVENT_JOB_DONE) rrep = ev[i].report;
    }
    if (!handles.empty()) {
      EXPECT_EQ(na_message_release_batch(p.b, handles.data(), handles.size()), static_cast<int>(handles.size()));
    }
    n = na_poll_events(p.a, ev, 64, 0);
    EXPECT_GE(n, 0);
    for (int i = 0; i < n; ++i)
      if (ev[i].type == NA_EVENT_JOB_DONE) srep = ev[i].report;
  }
  if (rrep) {
    na_group_report gr;
    EXPECT_EQ(na_report_get_group(rrep, 0, &gr), NA_OK);
    d.report_delivered = gr.delivered;
  }
  if (srep) {
    na_report_info info;
    EXPECT_EQ(na_report_get_info(srep, &info), NA_OK);
    d.sender_ok = info.status == NA_OK;
  }
  EXPECT_NE(rrep, nullptr);
  EXPECT_NE(srep, nullptr);
  na_report_free(rrep);
  na_report_free(srep);
  return d;
}

// Submits message ids [first, first + count) as one batch from fresh heap buffers, freed right after the call.
// Returns the call's result; entries' statuses in *statuses.
int submit_fresh(Pair& p, uint32_t job, uint32_t first, uint32_t count, const std::vector<size_t>& sizes,
                 int timeout_ms, std::vector<int32_t>* statuses = nullptr) {
  std::vector<std::unique_ptr<uint8_t[]>> bufs;
  std::vector<na_submit_entry> e(count);
  for (uint32_t k = 0; k < count; ++k) {
    const uint32_t m = first + k;
    bufs.emplace_back(new uint8_t[sizes[m]]);
    for (size_t i = 0; i < sizes[m]; ++i) bufs.back()[i] = pattern(m, i);
    e[k] = na_submit_entry{0, m, bufs.back().get(), sizes[m], 12345};
  }
  const int rc = na_job_submit_batch(p.a, p.sid, job, e.data(), e.size(), timeout_ms);
  for (uint32_t k = 0; k < count; ++k) std::memset(bufs[k].get(), 0xEE, sizes[first + k]);  // the engine has copies
  bufs.clear();  // ... and must never read these again (ASan)
  if (statuses) {
    statuses->clear();
    for (const auto& x : e) statuses->push_back(x.status);
  }
  return rc;
}

}  // namespace

TEST(CApiBatch, ArgumentsAreChecked) {
  uint8_t byte = 7;
  na_submit_entry one{0, 0, &byte, 1, 0};
  EXPECT_EQ(na_job_submit_batch(nullptr, 1, 1, &one, 1, 0), NA_ERR_CLOSED_HANDLE);
  Pair p(loopback_config(), loopback_config());
  ASSERT_NE(p.a, nullptr);
  ASSERT_NE(p.b, nullptr);
  EXPECT_EQ(na_job_submit_batch(p.a, p.sid, 1, nullptr, 0, 0), 0);
  EXPECT_EQ(na_job_submit_batch(p.a, p.sid, 1, nullptr, 3, 0), NA_ERR_INVALID_ARGUMENT);
  std::vector<na_submit_entry> many(NA_SUBMIT_BATCH_MAX + 1, one);
  EXPECT_EQ(na_job_submit_batch(p.a, p.sid, 1, many.data(), many.size(), 0), NA_ERR_LIMIT_EXCEEDED);
  // No such job: nothing accepted, the first entry says why.
  one.status = 99;
  EXPECT_EQ(na_job_submit_batch(p.a, p.sid, 77, &one, 1, 0), 0);
  EXPECT_EQ(one.status, NA_ERR_NOT_FOUND);

  na_group_spec g{5, 4, 1.0};
  ASSERT_EQ(na_job_start(p.a, p.sid, 1, &g, 1, 1), NA_OK);
  uint8_t payload[4][8];
  na_submit_entry e[4];
  for (uint32_t m = 0; m < 4; ++m) {
    for (size_t i = 0; i < 8; ++i) payload[m][i] = pattern(m, i);
    e[m] = na_submit_entry{0, m, payload[m], 8, 99};
  }
  e[2].data = nullptr;  // a bad entry: the batch stops there, the prefix is in
  EXPECT_EQ(na_job_submit_batch(p.a, p.sid, 1, e, 4, 0), 2);
  EXPECT_EQ(e[0].status, NA_OK);
  EXPECT_EQ(e[1].status, NA_OK);
  EXPECT_EQ(e[2].status, NA_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(e[3].status, 99);  // not tried, untouched
  e[2].data = payload[2];
  e[3].group_index = 1;  // the job has one group
  EXPECT_EQ(na_job_submit_batch(p.a, p.sid, 1, e + 2, 2, 0), 1);
  EXPECT_EQ(e[2].status, NA_OK);
  EXPECT_LT(e[3].status, 0);
  e[3].group_index = 0;
  EXPECT_EQ(na_job_submit_batch(p.a, p.sid, 1, e + 3, 1, 0), 1);
  const Drained d = drain(p, {8, 8, 8, 8});
  EXPECT_EQ(d.messages, 4u);
  EXPECT_EQ(d.bad, 0u);
  EXPECT_EQ(d.report_delivered, 4u);
  EXPECT_TRUE(d.sender_ok);
  EXPECT_EQ(na_engine_close(p.a), NA_OK);
  EXPECT_EQ(na_job_submit_batch(p.a, p.sid, 1, e, 1, 0), NA_ERR_CLOSED_HANDLE);
}

// Mixed sizes (bundled small ones, multi-segment large ones) in batches of 1 to 400, each batch's buffers freed at
// once; with a blocking timeout every batch is accepted whole.
TEST(CApiBatch, BatchesAreCopiedSoTheCallerMayFreeItsBuffersAtOnce) {
  Pair p(loopback_config(), loopback_config());
  ASSERT_NE(p.a, nullptr);
  ASSERT_NE(p.b, nullptr);
  std::vector<size_t> sizes;
  const size_t pick[] = {100, 1, 700, 3000, 20000, 200, 60};
  for (uint32_t i = 0; i < 2000; ++i) sizes.push_back(pick[i % 7]);
  na_group_spec g{9, static_cast<uint32_t>(sizes.size()), 1.0};
  ASSERT_EQ(na_job_start(p.a, p.sid, 3, &g, 1, 1), NA_OK);
  const uint32_t batch_sizes[] = {1, 7, 64, 400, 256, 13};
  uint32_t next = 0;
  for (int k = 0; next < sizes.size(); ++k) {
    const uint32_t count = std::min<uint32_t>(batch_sizes[k % 6], static_cast<uint32_t>(sizes.size()) - next);
    std::vector<int32_t> st;
    ASSERT_EQ(submit_fresh(p, 3, next, count, sizes, 60'000, &st), static_cast<int>(count)) << "batch at " << next;
    for (int32_t s : st) EXPECT_EQ(s, NA_OK);
    next += count;
  }
  const Drained d = drain(p, sizes);
  EXPECT_EQ(d.messages, sizes.size());
  EXPECT_EQ(d.bad, 0u);
  EXPECT_EQ(d.report_delivered, sizes.size());
  EXPECT_TRUE(d.sender_ok);
}

// A send buffer that holds 16 of these messages: a non-blocking batch of 200 is accepted in part (a prefix, the
// first refused entry NA_ERR_WOULD_BLOCK; the batch holds the engine lock, so no acknowledgement frees space
// meanwhile). The rest goes in later blocking calls while the receiver drains; everything arrives once.
TEST(CApiBatch, AFullSendBufferAcceptsAPrefix) {
  na_config sender = loopback_config();
  sender.send_buffer_bytes = 16 * 4096;
  Pair p(sender, loopback_config());
  ASSERT_NE(p.a, nullptr);
  ASSERT_NE(p.b, nullptr);
  const std::vector<size_t> sizes(200, 4096);
  na_group_spec g{4, 200, 1.0};
  ASSERT_EQ(na_job_start(p.a, p.sid, 8, &g, 1, 1), NA_OK);
  std::vector<int32_t> st;
  const int first = submit_fresh(p, 8, 0, 200, sizes, 0, &st);
  ASSERT_GE(first, 1);
  ASSERT_LT(first, 200);  // 800 KiB do not fit a 64 KiB send buffer
  for (int k = 0; k < first; ++k) EXPECT_EQ(st[k], NA_OK);
  EXPECT_EQ(st[first], NA_ERR_WOULD_BLOCK);
  EXPECT_EQ(st[first + 1], 12345);  // not tried
  // The rest, blocking; a thread drains the receiver meanwhile.
  Drained d;
  std::thread rx([&] { d = drain(p, sizes); });
  uint32_t next = static_cast<uint32_t>(first);
  while (next < 200) {
    const uint32_t count = std::min<uint32_t>(50, 200 - next);
    const int rc = submit_fresh(p, 8, next, count, sizes, 60'000);
    EXPECT_EQ(rc, static_cast<int>(count));
    if (rc != static_cast<int>(count)) break;  // (no ASSERT: the drain thread must be joined)
    next += count;
  }
  rx.join();
  EXPECT_EQ(d.messages, 200u);
  EXPECT_EQ(d.bad, 0u);
  EXPECT_EQ(d.report_delivered, 200u);
  EXPECT_TRUE(d.sender_ok);
}
