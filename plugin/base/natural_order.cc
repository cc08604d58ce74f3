// SPDX-License-Identifier: Apache-2.0
// NaturalCompare: digit runs by value, other bytes bytewise.

#include "plugin/base/natural_order.h"

#include <cstddef>

namespace k8s_agent {
namespace {

// Not std::isdigit: that depends on the locale, and a name's order must not.
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

size_t DigitRunEnd(std::string_view s, size_t i) {
  while (i < s.size() && IsDigit(s[i])) ++i;
  return i;
}

// The run without its leading zeros ("" for zero): then a longer run is a
// larger number and equal lengths compare digit by digit, with no integer
// type to overflow.
std::string_view Significant(std::string_view run) {
  size_t nz = run.find_first_not_of('0');
  return nz == std::string_view::npos ? std::string_view() : run.substr(nz);
}

int Sign(int c) { return c < 0 ? -1 : (c > 0 ? 1 : 0); }

}  // namespace

int NaturalCompare(std::string_view a, std::string_view b) {
  // Set by the first pair of equal-valued digit runs of different lengths;
  // it decides only if nothing else does.
  int leading_zeros = 0;
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (IsDigit(a[i]) && IsDigit(b[j])) {
      size_t end_a = DigitRunEnd(a, i);
      size_t end_b = DigitRunEnd(b, j);
      std::string_view na = Significant(a.substr(i, end_a - i));
      std::string_view nb = Significant(b.substr(j, end_b - j));
      if (na.size() != nb.size()) return na.size() < nb.size() ? -1 : 1;
      if (int c = na.compare(nb); c != 0) return Sign(c);
      if (leading_zeros == 0 && end_a - i != end_b - j) {
        leading_zeros = end_a - i > end_b - j ? -1 : 1;
      }
      i = end_a;
      j = end_b;
      continue;
    }
    auto ca = static_cast<unsigned char>(a[i]);
    auto cb = static_cast<unsigned char>(b[j]);
    if (ca != cb) return ca < cb ? -1 : 1;
    ++i;
    ++j;
  }
  bool a_ended = i == a.size();
  bool b_ended = j == b.size();
  if (a_ended != b_ended) return a_ended ? -1 : 1;
  return leading_zeros;
}

bool NaturalLess(std::string_view a, std::string_view b) {
  return NaturalCompare(a, b) < 0;
}

}  // namespace k8s_agent
