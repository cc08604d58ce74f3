// SPDX-License-Identifier: Apache-2.0
// ParseRfc3339Micros: a strict, allocation-free parser.

#include "plugin/base/rfc3339.h"

#include <cctype>

namespace k8s_agent {
namespace {

// Reads exactly `n` digits at *pos.
bool Digits(std::string_view s, size_t* pos, int n, int* out) {
  if (*pos + static_cast<size_t>(n) > s.size()) return false;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    char c = s[*pos + static_cast<size_t>(i)];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + (c - '0');
  }
  *pos += static_cast<size_t>(n);
  *out = v;
  return true;
}

bool Expect(std::string_view s, size_t* pos, char c) {
  if (*pos >= s.size() || s[*pos] != c) return false;
  ++*pos;
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
// days_from_civil).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace

std::optional<int64_t> ParseRfc3339Micros(std::string_view text) {
  std::string_view s = text;
  size_t pos = 0;
  int year, month, day, hour, minute, second;
  if (!Digits(s, &pos, 4, &year) || !Expect(s, &pos, '-') ||
      !Digits(s, &pos, 2, &month) || !Expect(s, &pos, '-') ||
      !Digits(s, &pos, 2, &day)) {
    return std::nullopt;
  }
  if (pos >= s.size() || (s[pos] != 'T' && s[pos] != 't')) return std::nullopt;
  ++pos;
  if (!Digits(s, &pos, 2, &hour) || !Expect(s, &pos, ':') ||
      !Digits(s, &pos, 2, &minute) || !Expect(s, &pos, ':') ||
      !Digits(s, &pos, 2, &second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 ||
      minute > 59 || second > 60) {
    return std::nullopt;
  }
  int64_t micros = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int scale = 100000;
    size_t first = pos;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
      micros += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == first) return std::nullopt;
  }
  int64_t offset_s = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int sign = s[pos] == '-' ? -1 : 1;
    ++pos;
    int oh, om;
    if (!Digits(s, &pos, 2, &oh) || !Expect(s, &pos, ':') ||
        !Digits(s, &pos, 2, &om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset_s = sign * (oh * 3600 + om * 60);
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  int64_t secs = DaysFromCivil(year, month, day) * 86400 + hour * 3600 +
                 minute * 60 + second - offset_s;
  return secs * 1000000 + micros;
}

}  // namespace k8s_agent
