#include "schedule.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace netapprox::sim {

namespace {
constexpr uint32_t kMaxMessages = 1U << 22;
constexpr uint32_t kMaxMessageBytes = 64U << 20;
}  // namespace

Schedule read_schedule(const std::string& path, uint32_t hosts) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("schedule " + path + ": cannot open");
  Schedule s;
  std::string line;
  size_t lineno = 0;
  auto fail = [&](const std::string& what) {
    throw std::runtime_error("schedule " + path + ":" + std::to_string(lineno) + ": " + what);
  };
  auto host_ok = [&](uint32_t h) { return h >= 1 && h <= hosts; };
  auto next_line = [&](std::string& out) {
    while (std::getline(in, out)) {
      ++lineno;
      if (!out.empty() && out[0] != '#') return true;
    }
    return false;
  };
  while (next_line(line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "job") {
      JobDesc j;
      std::string kind;
      int trace = 0;
      if (!(ls >> j.id >> j.start_ns >> j.sender >> j.receiver >> j.msr)) fail("bad job header");
      uint32_t n = 0;
      if (!(ls >> n >> kind >> trace)) fail("bad job header");
      if (!host_ok(j.sender) || !host_ok(j.receiver) || j.sender == j.receiver) fail("bad sender/receiver");
      if (!(j.msr >= 0 && j.msr <= 1)) fail("MSR must be in [0, 1]");
      if (n == 0 || n > kMaxMessages) fail("message count out of range");
      if (kind != "approx" && kind != "exact") fail("kind must be approx or exact");
      j.exact = kind == "exact";
      j.trace = trace != 0;
      std::string sizes, offs;
      if (!next_line(sizes) || !next_line(offs)) fail("job without sizes and offsets lines");
      std::istringstream ss(sizes), os(offs);
      j.sizes.resize(n);
      j.offsets_ns.resize(n);
      for (uint32_t i = 0; i < n; ++i) {
        if (!(ss >> j.sizes[i]) || j.sizes[i] == 0 || j.sizes[i] > kMaxMessageBytes) fail("bad message size");
        if (!(os >> j.offsets_ns[i]) || (i > 0 && j.offsets_ns[i] < j.offsets_ns[i - 1])) fail("bad offset");
      }
      s.jobs.push_back(std::move(j));
    } else if (tag == "bg") {
      BackgroundDesc b;
      if (!(ls >> b.id >> b.sender >> b.receiver >> b.rate_bps >> b.packet_bytes >> b.start_ns >> b.stop_ns >> b.cls))
        fail("bad bg line");
      if (!host_ok(b.sender) || !host_ok(b.receiver) || b.sender == b.receiver) fail("bad sender/receiver");
      if (!(b.rate_bps > 0) || b.packet_bytes < 64 || b.packet_bytes > 1472 || b.stop_ns <= b.start_ns ||
          b.cls < 0 || b.cls > 7)
        fail("bad bg parameters");
      uint64_t at;
      int c;
      while (ls >> at >> c) {
        if (c < 0 || c > 7) fail("bad bg class");
        b.moves.emplace_back(at, c);
      }
      s.background.push_back(std::move(b));
    } else {
      fail("unknown record '" + tag + "'");
    }
  }
  return s;
}

}  // namespace netapprox::sim
