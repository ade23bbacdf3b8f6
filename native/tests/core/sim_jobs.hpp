// Helpers shared by the simulated-link tests: jobs with checkable payloads, submitting them, reading reports.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "sim.hpp"

namespace netapprox::atp::sim {

constexpr TimeNs kUs = 1'000;
constexpr TimeNs kMs = 1'000'000;
constexpr TimeNs kSec = 1'000'000'000;

inline EngineConfig test_config(Mode mode = Mode::kFull) {
  EngineConfig c;
  c.line_rate_bps = 1'000'000'000;  // 1 Gbit/s keeps simulated runs short
  c.mode = mode;
  c.peer_death_timeout = 2 * kSec;
  return c;
}

// Message payload that encodes (job, id, byte index) so corruption and misplacement are detectable.
inline std::vector<uint8_t> payload(JobId job, MessageId id, size_t len) {
  std::vector<uint8_t> v(len);
  for (size_t i = 0; i < len; ++i) v[i] = static_cast<uint8_t>((id * 131 + job * 7 + i * 17 + (i >> 8)) & 0xff);
  return v;
}

struct Job {
  JobSpec spec;
  std::vector<size_t> sizes;  // by message id
};

inline Job make_job(JobId id, std::vector<std::pair<uint32_t, double>> groups, size_t msg_bytes, bool mrdf = true) {
  Job j;
  j.spec.job_id = id;
  j.spec.mrdf = mrdf;
  uint64_t gid = 100;
  for (auto [n, msr] : groups) {
    j.spec.groups.push_back({gid++, n, msr});
    for (uint32_t i = 0; i < n; ++i) j.sizes.push_back(msg_bytes);
  }
  return j;
}

// Starts the job on `e` and submits every message, in order, waiting for send buffer space when needed.
inline void submit_all(Sim& s, Engine& e, const Job& j) {
  ASSERT_EQ(e.start_job(Sim::kSession, j.spec, s.now()), Status::kOk);
  MessageId id = 0;
  for (uint32_t g = 0; g < j.spec.groups.size(); ++g) {
    for (uint32_t i = 0; i < j.spec.groups[g].size; ++i, ++id) {
      auto data = payload(j.spec.job_id, id, j.sizes[id]);
      Status st;
      while ((st = e.submit(Sim::kSession, j.spec.job_id, g, i, data.data(), data.size(), s.now())) ==
             Status::kWouldBlock) {
        const TimeNs deadline = s.now() + kMs;
        s.run([] { return false; }, deadline);
      }
      ASSERT_EQ(st, Status::kOk);
    }
  }
}
inline void submit_all(Sim& s, const Job& j) { submit_all(s, s.a(), j); }

inline std::shared_ptr<const JobReport> report_of(const std::vector<Event>& evs, JobId job) {
  for (const auto& e : evs)
    if (e.type == EventType::kJobDone && e.job == job) return e.report;
  return nullptr;
}

inline uint32_t target(double msr, uint32_t n) { return static_cast<uint32_t>(std::ceil(msr * n - 1e-9)); }

}  // namespace netapprox::atp::sim
