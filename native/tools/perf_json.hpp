// Minimal JSON writer for atp-perf (no dependency): objects, arrays, strings, numbers, booleans.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace netapprox::perf {

class Json {
 public:
  Json& begin_object(const char* key = nullptr) { return open(key, '{'); }
  Json& end_object() { return close('}'); }
  Json& begin_array(const char* key = nullptr) { return open(key, '['); }
  Json& end_array() { return close(']'); }

  Json& str(const char* key, const std::string& v) {
    prefix(key);
    quote(v);
    return *this;
  }
  Json& num(const char* key, double v) {
    prefix(key);
    if (!std::isfinite(v)) {
      out_ += "null";
    } else {
      char b[64];
      std::snprintf(b, sizeof b, "%.6g", v);
      out_ += b;
    }
    return *this;
  }
  Json& integer(const char* key, int64_t v) {
    prefix(key);
    out_ += std::to_string(v);
    return *this;
  }
  Json& uinteger(const char* key, uint64_t v) {
    prefix(key);
    out_ += std::to_string(v);
    return *this;
  }
  Json& boolean(const char* key, bool v) {
    prefix(key);
    out_ += v ? "true" : "false";
    return *this;
  }
  Json& null(const char* key) {
    prefix(key);
    out_ += "null";
    return *this;
  }
  // Inserts an already-serialised JSON value.
  Json& raw(const char* key, const std::string& json) {
    prefix(key);
    out_ += json;
    return *this;
  }
  const std::string& text() const { return out_; }

 private:
  Json& open(const char* key, char c) {
    prefix(key);
    out_ += c;
    first_.push_back(true);
    return *this;
  }
  Json& close(char c) {
    out_ += c;
    if (!first_.empty()) first_.pop_back();
    return *this;
  }
  void prefix(const char* key) {
    if (!first_.empty()) {
      if (!first_.back()) out_ += ", ";
      first_.back() = false;
    }
    if (key) {
      quote(key);
      out_ += ": ";
    }
  }
  void quote(const std::string& s) {
    out_ += '"';
    for (unsigned char c : s) {
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\r': out_ += "\\r"; break;
        case '\t': out_ += "\\t"; break;
        default:
          if (c < 0x20) {
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04x", c);
            out_ += b;
          } else {
            out_ += static_cast<char>(c);
          }
      }
    }
    out_ += '"';
  }
  std::string out_;
  std::vector<bool> first_;
};

}  // namespace netapprox::perf
