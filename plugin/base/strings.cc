// SPDX-License-Identifier: Apache-2.0
// String helpers, duration parsing and formatting, file reading.

#include "plugin/base/strings.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <numeric>

#include "plugin/base/unique_fd.h"

namespace k8s_agent {

std::string Join(const std::vector<std::string>& words, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += sep;
    out += words[i];
  }
  return out;
}

bool Contains(const std::vector<std::string>& words, std::string_view word) {
  for (const std::string& w : words) {
    if (w == word) return true;
  }
  return false;
}

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.emplace_back(s.substr(start));
      return out;
    }
    out.emplace_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string_view Trim(std::string_view s) {
  const char* ws = " \t\r\n";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

std::string PercentEncode(std::string_view value) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : value) {
    auto c = static_cast<unsigned char>(ch);  // Bytes >= 0x80 escape as %XX.
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool MatchPattern(std::string_view s, std::string_view p) {
  size_t si = 0, pi = 0, star = std::string_view::npos, mark = 0;
  while (si < s.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == s[si])) {
      ++si;
      ++pi;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = si;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      si = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

size_t EditDistance(std::string_view a, std::string_view b) {
  // One row of the classic table at a time.
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

StatusOr<Duration> ParseDuration(std::string_view text) {
  std::string_view s = Trim(text);
  auto bad = [&] {
    return InvalidArgumentError("invalid duration \"" + Printable(text) +
                                "\" (use e.g. 30s, 10m, 1h30m, 250ms)");
  };
  if (s.empty()) return bad();
  double total_ns = 0;
  size_t i = 0;
  bool bare = true;
  while (i < s.size()) {
    size_t start = i;
    while (i < s.size() &&
           (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.'))
      ++i;
    if (i == start) return bad();
    std::string number(s.substr(start, i - start));
    char* end = nullptr;
    double value = std::strtod(number.c_str(), &end);
    if (end == nullptr || *end != '\0' || !std::isfinite(value)) return bad();
    size_t unit_start = i;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    std::string_view unit = s.substr(unit_start, i - unit_start);
    double scale;
    if (unit.empty()) {
      if (!bare || i != s.size()) return bad();
      scale = 1e9;  // A bare number is seconds, as ssh's ConnectTimeout.
    } else if (unit == "ns") {
      scale = 1;
    } else if (unit == "us") {
      scale = 1e3;
    } else if (unit == "ms") {
      scale = 1e6;
    } else if (unit == "s") {
      scale = 1e9;
    } else if (unit == "m") {
      scale = 60e9;
    } else if (unit == "h") {
      scale = 3600e9;
    } else {
      return bad();
    }
    bare = false;
    total_ns += value * scale;
  }
  // Durations beyond a year are a typo, not a wish.
  if (total_ns > 365.0 * 24 * 3600e9) return bad();
  return std::chrono::duration_cast<Duration>(
      std::chrono::nanoseconds(static_cast<int64_t>(total_ns)));
}

namespace {

// The one rule of FormatDuration and FormatMicrosPadded (strings.h);
// `minor_width` (1 or 2) is all that tells the two styles apart. Integer
// arithmetic only: truncation is exact, and no double rounds 1.25s one
// way and 1.35s the other.
std::string FormatMicrosWithWidth(int64_t us, int minor_width) {
  constexpr uint64_t kMs = 1000;
  constexpr uint64_t kSec = 1000 * kMs;
  constexpr uint64_t kMin = 60 * kSec;
  constexpr uint64_t kHour = 60 * kMin;
  // Unsigned: the magnitude of INT64_MIN does not fit in int64_t.
  uint64_t a = us < 0 ? uint64_t{0} - static_cast<uint64_t>(us)
                      : static_cast<uint64_t>(us);
  const char* sign = us < 0 && a >= kMs ? "-" : "";  // Never "-0ms".
  char buf[64];
  if (a < kSec) {
    std::snprintf(buf, sizeof(buf), "%s%" PRIu64 "ms", sign, a / kMs);
  } else if (a < kMin) {
    std::snprintf(buf, sizeof(buf), "%s%" PRIu64 ".%" PRIu64 "s", sign,
                  a / kSec, a % kSec / (kSec / 10));
  } else if (a < kHour) {
    std::snprintf(buf, sizeof(buf), "%s%" PRIu64 "m%0*" PRIu64 "s", sign,
                  a / kMin, minor_width, a % kMin / kSec);
  } else {
    std::snprintf(buf, sizeof(buf), "%s%" PRIu64 "h%0*" PRIu64 "m", sign,
                  a / kHour, minor_width, a % kHour / kMin);
  }
  return buf;
}

}  // namespace

std::string FormatDuration(Duration d) {
  return FormatMicrosWithWidth(
      std::chrono::duration_cast<std::chrono::microseconds>(d).count(), 1);
}

std::string FormatMicrosPadded(int64_t us) {
  return FormatMicrosWithWidth(us, 2);
}

std::string FormatWallMicros(int64_t us) {
  time_t secs = static_cast<time_t>(us / 1000000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02d %02d:%02d:%02d.%03d UTC",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec, static_cast<int>((us / 1000) % 1000));
  return buf;
}

StatusOr<int> ParseInt(std::string_view text) {
  std::string_view s = Trim(text);
  if (s.empty() || s.size() > 9) {
    return InvalidArgumentError("invalid number \"" + Printable(text) + "\"");
  }
  int value = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      return InvalidArgumentError("invalid number \"" + Printable(text) + "\"");
    }
    value = value * 10 + (c - '0');
  }
  return value;
}

namespace {

// The length of the valid UTF-8 sequence at the start of `s` that encodes
// a printable character (not C1), or 0. RFC 3629: no overlong forms, no
// surrogates, nothing over U+10FFFF.
size_t PrintableUtf8Length(std::string_view s) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char lead = byte(0);
  size_t len;
  char32_t cp;
  if (lead >= 0xc2 && lead <= 0xdf) {
    len = 2;
    cp = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    len = 3;
    cp = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    len = 4;
    cp = lead & 0x07;
  } else {
    return 0;  // ASCII is the caller's; 0x80-0xc1 and 0xf5-0xff never lead.
  }
  if (s.size() < len) return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i) & 0x3f);
  }
  bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
  bool surrogate = cp >= 0xd800 && cp <= 0xdfff;
  bool c1 = cp >= 0x80 && cp <= 0x9f;
  if (overlong || surrogate || c1 || cp > 0x10ffff) return 0;
  return len;
}

}  // namespace

std::string Printable(std::string_view s, size_t max_len) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    if (out.size() >= max_len) {
      out += "...";
      break;
    }
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    size_t len = c >= 0x80 ? PrintableUtf8Length(s.substr(i)) : 0;
    if (len > 0) {
      out.append(s.substr(i, len));
      i += len;
      continue;
    }
    // One byte at a time: what follows a bad lead byte may be good text.
    char buf[8];
    std::snprintf(buf, sizeof(buf), "\\x%02x", c);
    out += buf;
    ++i;
  }
  return out;
}

StatusOr<std::string> ReadFileToString(const std::string& path,
                                       size_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError("open " + path, errno);
  std::string out;
  char buf[8192];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("read " + path, errno);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      return TooLargeError(path + ": larger than " + std::to_string(max_bytes) +
                           " bytes");
    }
  }
  return out;
}

}  // namespace k8s_agent
