// atp-perf --verify: checks every message a receiver delivers against what the atp-perf sender submits.
//
// The sender fills message `id` (dense over the job, group after group) with the pattern byte i = (i*131 + 7) mod
// 256, and writes the id (4 bytes, host order) over the first 4 bytes when the message has at least 4. The
// verifier knows the job's layout (message count, message size, each group's MSR) and checks, per message: the id
// is in the job, its group is the one the layout gives, the length and every byte are right, it was not delivered
// before and not given up before; and for exact groups (target = size), that it is the next one in order. At the
// end it checks the receiver's report against what it saw. One verifier per job; it is not thread-safe.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "perf_json.hpp"

namespace netapprox::perf {

inline uint8_t pattern_byte(size_t i) { return static_cast<uint8_t>(i * 131 + 7); }

// Fills message `id` as the atp-perf sender does.
inline void fill_message(uint8_t* buf, size_t len, uint32_t id) {
  for (size_t i = 0; i < len; ++i) buf[i] = pattern_byte(i);
  if (len >= 4) std::memcpy(buf, &id, 4);
}

// ceil(msr * size) with the engine's tolerance, clamped to [0, size].
inline uint32_t target_of(double msr, uint32_t size) {
  double t = std::ceil(msr * double(size) - 1e-9);
  return static_cast<uint32_t>(std::clamp(t, 0.0, double(size)));
}

// Group sizes as the sender splits n messages over k groups: the first n % k groups get one more.
inline std::vector<uint32_t> split_sizes(uint32_t n, size_t k) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < k; ++i) out.push_back(static_cast<uint32_t>(n / k + (i < n % k ? 1 : 0)));
  return out;
}

class MessageVerifier {
 public:
  MessageVerifier(uint32_t messages, uint32_t message_bytes, const std::vector<double>& msrs)
      : n_(messages), size_(message_bytes), delivered_(messages, false), lost_(messages, false) {
    uint32_t base = 0;
    const std::vector<uint32_t> sizes = split_sizes(messages, msrs.size());
    for (size_t g = 0; g < msrs.size(); ++g) {
      Group gr;
      gr.base = base;
      gr.size = sizes[g];
      gr.exact = target_of(msrs[g], gr.size) == gr.size;
      gr.next = base;
      base += gr.size;
      groups_.push_back(gr);
    }
  }

  void on_message(atp::JobId job, atp::MessageId id, uint64_t group_id, const uint8_t* data, size_t len) {
    checked_++;
    if (job != kJob) return fail(&wrong_job_, "message %u of unexpected job %u", id, job);
    if (id >= n_) return fail(&unknown_id_, "message id %u beyond the job's %u messages", id, n_);
    const size_t g = group_of(id);
    if (group_id != g)
      fail(&wrong_group_, "message %u reported in group %llu, it belongs to group %zu", id,
           static_cast<unsigned long long>(group_id), g);
    if (len != size_) {
      fail(&wrong_length_, "message %u has %zu bytes, expected %u", id, len, size_);
    } else {
      uint32_t embedded = id;
      if (len >= 4) std::memcpy(&embedded, data, 4);
      if (embedded != id) fail(&wrong_id_, "message %u carries the bytes of message %u", id, embedded);
      for (size_t i = len >= 4 ? 4 : 0; i < len; ++i) {
        if (data[i] != pattern_byte(i)) {
          fail(&bad_bytes_, "message %u: byte %zu is 0x%02x, expected 0x%02x", id, i, data[i], pattern_byte(i));
          break;
        }
      }
    }
    if (delivered_[id]) fail(&duplicates_, "message %u delivered twice", id);
    if (lost_[id]) fail(&delivered_after_lost_, "message %u delivered after it was given up", id);
    delivered_[id] = true;
    groups_[g].delivered++;
    if (groups_[g].exact) {
      if (id != groups_[g].next)
        fail(&out_of_order_, "exact group %zu: message %u delivered, expected %u", g, id, groups_[g].next);
      groups_[g].next = std::max(groups_[g].next, id + 1);
    }
  }

  void on_lost(atp::JobId job, atp::MessageId id) {
    if (job != kJob || id >= n_) return fail(&unknown_id_, "loss notice for unknown message %u of job %u", id, job);
    if (groups_[group_of(id)].exact) fail(&exact_lost_, "message %u of an exact group given up", id);
    lost_[id] = true;
  }

  // The receiver's report must agree with what was delivered, and a completed job meets every target.
  void on_report(const atp::JobReport& rep) {
    if (rep.groups.size() != groups_.size())
      return fail(&report_mismatch_, "report has %zu groups, the job %zu", rep.groups.size(), groups_.size());
    for (size_t g = 0; g < groups_.size(); ++g) {
      const auto& r = rep.groups[g];
      if (r.size != groups_[g].size || r.delivered != groups_[g].delivered)
        fail(&report_mismatch_, "group %zu: report says %u of %u delivered, the verifier saw %u of %u", g, r.delivered,
             r.size, groups_[g].delivered, groups_[g].size);
      if (rep.status == atp::Status::kOk && r.delivered < r.target)
        fail(&below_target_, "group %zu: %u delivered, below its target %u", g, r.delivered, r.target);
    }
    report_seen_ = true;
  }

  uint64_t errors() const {
    return wrong_job_ + unknown_id_ + wrong_group_ + wrong_length_ + wrong_id_ + bad_bytes_ + duplicates_ +
           delivered_after_lost_ + out_of_order_ + exact_lost_ + report_mismatch_ + below_target_;
  }
  uint64_t checked() const { return checked_; }
  const std::string& first_error() const { return first_error_; }

  std::string json() const {
    Json j;
    j.begin_object();
    j.uinteger("messages_checked", checked_).uinteger("errors", errors()).boolean("report_checked", report_seen_);
    j.uinteger("wrong_job", wrong_job_).uinteger("unknown_id", unknown_id_).uinteger("wrong_group", wrong_group_);
    j.uinteger("wrong_length", wrong_length_).uinteger("wrong_id", wrong_id_).uinteger("bad_bytes", bad_bytes_);
    j.uinteger("duplicates", duplicates_).uinteger("delivered_after_lost", delivered_after_lost_);
    j.uinteger("out_of_order", out_of_order_).uinteger("exact_lost", exact_lost_);
    j.uinteger("report_mismatch", report_mismatch_).uinteger("below_target", below_target_);
    j.str("first_error", first_error_);
    j.end_object();
    return j.text();
  }

  static constexpr atp::JobId kJob = 1;  // the one job an atp-perf client runs per session

 private:
  struct Group {
    uint32_t base = 0, size = 0, next = 0, delivered = 0;
    bool exact = false;
  };

  size_t group_of(atp::MessageId id) const {
    auto after = std::upper_bound(groups_.begin(), groups_.end(), id,
                                  [](atp::MessageId m, const Group& gr) { return m < gr.base; });
    return static_cast<size_t>(after - groups_.begin()) - 1;
  }

  template <typename... Args>
  void fail(uint64_t* counter, const char* fmt, Args... args) {
    ++*counter;
    if (first_error_.empty()) {
      char buf[256];
      std::snprintf(buf, sizeof buf, fmt, args...);
      first_error_ = buf;
    }
  }

  uint32_t n_, size_;
  std::vector<Group> groups_;
  std::vector<bool> delivered_, lost_;
  uint64_t checked_ = 0;
  uint64_t wrong_job_ = 0, unknown_id_ = 0, wrong_group_ = 0, wrong_length_ = 0, wrong_id_ = 0, bad_bytes_ = 0;
  uint64_t duplicates_ = 0, delivered_after_lost_ = 0, out_of_order_ = 0, exact_lost_ = 0;
  uint64_t report_mismatch_ = 0, below_target_ = 0;
  bool report_seen_ = false;
  std::string first_error_;
};

}  // namespace netapprox::perf
