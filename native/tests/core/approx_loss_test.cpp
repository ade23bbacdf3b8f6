// Approximate jobs under heavy injected loss (engine fault injection on the sender's outgoing datagrams, as the
// Kafka integration runs its relay, and on both directions): every job of a session completes with every group at
// its target, and the sender puts at most a small multiple of the job's bytes on the wire - no job keeps the two
// engines exchanging datagrams without end.
#include <gtest/gtest.h>

#include <random>

#include "sim_jobs.hpp"

using namespace netapprox::atp;
using namespace netapprox::atp::sim;

namespace {

struct Case {
  double loss_out_a, loss_out_b;  // fault injection on A's (sender) and B's (receiver) outgoing datagrams
  double msr;                     // every group's MSR (size = target / msr rounded up, as the Kafka relay plans)
  bool mrdf;
  size_t msg_bytes;
};

struct Outcome {
  int jobs = 0, done = 0, below_target = 0;
  uint64_t job_bytes = 0, sender_bytes = 0;
};

// One session, `rounds` rounds of `concurrent` jobs started together with 1-12 groups each, their messages
// submitted round-robin over jobs and groups (as the Java SendScheduler interleaves groups).
Outcome run_session(const Case& c, uint64_t seed, int rounds, int concurrent) {
  std::mt19937_64 rng(seed);
  EngineConfig cfg = test_config();
  cfg.peer_death_timeout = 30 * kSec;
  EngineConfig ca = cfg, cb = cfg;
  ca.faults.drop_outgoing = c.loss_out_a;
  cb.faults.drop_outgoing = c.loss_out_b;
  ca.faults.seed = seed * 2 + 1;
  cb.faults.seed = seed * 2 + 2;
  Sim s(ca, cb, LinkConfig{}, LinkConfig{}, seed);
  Outcome o;
  JobId next_id = 1;
  for (int r = 0; r < rounds; ++r) {
    std::vector<Job> jobs;
    for (int k = 0; k < concurrent; ++k) {
      std::vector<std::pair<uint32_t, double>> groups;
      const int ngroups = 1 + int(rng() % 12);
      for (int g = 0; g < ngroups; ++g) {
        const uint32_t tgt = 1 + uint32_t(rng() % 60);
        const uint32_t n = std::max(tgt, uint32_t(std::ceil(tgt / c.msr - 1e-9)));
        groups.push_back({n, double(tgt) / n});
      }
      jobs.push_back(make_job(next_id++, groups, c.msg_bytes, c.mrdf));
      EXPECT_EQ(s.a().start_job(Sim::kSession, jobs.back().spec, s.now()), Status::kOk);
      o.jobs++;
    }
    std::vector<std::vector<uint32_t>> next(jobs.size());
    for (size_t k = 0; k < jobs.size(); ++k) next[k].assign(jobs[k].spec.groups.size(), 0);
    for (bool more = true; more;) {
      more = false;
      for (size_t k = 0; k < jobs.size(); ++k) {
        const JobSpec& spec = jobs[k].spec;
        MessageId base = 0;
        for (uint32_t g = 0; g < spec.groups.size(); base += spec.groups[g].size, ++g) {
          uint32_t& i = next[k][g];
          if (i >= spec.groups[g].size) continue;
          auto data = payload(spec.job_id, base + i, c.msg_bytes);
          o.job_bytes += data.size();
          Status st;
          while ((st = s.a().submit(Sim::kSession, spec.job_id, g, i, data.data(), data.size(), s.now())) ==
                 Status::kWouldBlock)
            s.run([] { return false; }, s.now() + kMs);
          EXPECT_EQ(st, Status::kOk);
          if (++i < spec.groups[g].size) more = true;
        }
      }
    }
    auto all_done = [&] {
      for (const Job& j : jobs)
        if (!report_of(s.events_a, j.spec.job_id) || !report_of(s.events_b, j.spec.job_id)) return false;
      return true;
    };
    s.run(all_done, s.now() + 60 * kSec);
    for (const Job& j : jobs) {
      auto rs = report_of(s.events_a, j.spec.job_id), rr = report_of(s.events_b, j.spec.job_id);
      if (!rs || !rr) continue;
      o.done++;
      for (const auto& g : rr->groups) o.below_target += g.delivered < g.target;
    }
    if (!all_done()) break;  // a stuck job would stall the next rounds too
  }
  o.sender_bytes = s.a().stats().bytes_out;
  return o;
}

}  // namespace

// Loss 10/30/50 % on the sender's datagrams (and on the receiver's too), MSR 0.5/0.75/0.9, MRDF off and on,
// one-datagram and multi-datagram messages: 20 seeded sessions of 2 rounds x 2 concurrent jobs per case.
TEST(ApproxLossTest, ApproximateJobsCompleteUnderHeavyInjectedLoss) {
  std::vector<Case> cases;
  for (double loss : {0.1, 0.3, 0.5})
    for (double msr : {0.5, 0.75, 0.9})
      for (bool mrdf : {false, true}) cases.push_back({loss, 0.0, msr, mrdf, 60});
  cases.push_back({0.3, 0.3, 0.8, false, 60});
  cases.push_back({0.3, 0.3, 0.8, true, 3000});
  cases.push_back({0.5, 0.5, 0.75, false, 3000});
  for (const Case& c : cases) {
    int jobs = 0, done = 0, below = 0;
    double worst = 0;
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      Outcome o = run_session(c, seed, 2, 2);
      jobs += o.jobs;
      done += o.done;
      below += o.below_target;
      worst = std::max(worst, double(o.sender_bytes) / double(o.job_bytes));
    }
    SCOPED_TRACE(testing::Message() << "loss " << c.loss_out_a << "/" << c.loss_out_b << " msr " << c.msr << " mrdf "
                                    << c.mrdf << " bytes " << c.msg_bytes);
    EXPECT_EQ(done, jobs);
    EXPECT_EQ(below, 0);
    // Headers and tags double a 60-byte message; retransmissions add at most 1 / (1 - loss) on top.
    EXPECT_LT(worst, c.msg_bytes < 1000 ? 8.0 : 4.0);
  }
}
