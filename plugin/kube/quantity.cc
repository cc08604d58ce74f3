// SPDX-License-Identifier: Apache-2.0
// Kubernetes resource quantities, parsed exactly (no floating point).

#include "plugin/kube/quantity.h"

#include <cctype>
#include <limits>

#include "plugin/base/strings.h"

namespace k8s_agent::kube {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// The power of ten of a decimalExponent suffix ("e3", "E-3", "e+1"): "e" or
// "E", an optional sign, digits and nothing else. Beyond +-100 a quantity
// is out of range or rounds to 0 anyway, so larger ones are rejected.
StatusOr<int> DecimalExponent(const std::string& suffix) {
  Status invalid = InvalidArgumentError("bad exponent");
  if (suffix.empty() || (suffix[0] != 'e' && suffix[0] != 'E')) {
    return invalid;
  }
  size_t i = 1;
  int sign = 1;
  if (i < suffix.size() && (suffix[i] == '+' || suffix[i] == '-')) {
    if (suffix[i] == '-') sign = -1;
    ++i;
  }
  if (i == suffix.size()) return invalid;
  int value = 0;
  for (; i < suffix.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(suffix[i]))) return invalid;
    value = value * 10 + (suffix[i] - '0');
    if (value > 100) return invalid;
  }
  return sign * value;
}

}  // namespace

StatusOr<int64_t> QuantityMilli(const std::string& q) {
  Status invalid = InvalidArgumentError(
      "\"" + Printable(q) +
      "\" is not a non-negative resource quantity (e.g. 2, 500m, 4Ki)");
  Status too_large =
      InvalidArgumentError("quantity \"" + Printable(q) + "\" is too large");
  size_t i = 0;
  if (i < q.size() && q[i] == '+') ++i;
  std::string digits;
  int fraction_digits = 0;
  bool dot = false;
  for (; i < q.size(); ++i) {
    char c = q[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits += c;
      if (dot) ++fraction_digits;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (digits.empty()) return invalid;
  std::string suffix = q.substr(i);
  int exp10 = 0;
  int exp2 = 0;
  static const struct {
    const char* suffix;
    int exp10;
    int exp2;
  } kSuffixes[] = {{"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},
                   {"k", 3, 0},   {"M", 6, 0},   {"G", 9, 0},   {"T", 12, 0},
                   {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
                   {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60}};
  bool known = false;
  for (const auto& s : kSuffixes) {
    if (suffix == s.suffix) {
      exp10 = s.exp10;
      exp2 = s.exp2;
      known = true;
      break;
    }
  }
  if (!known) {
    // Decimal exponent, an "e" or "E" and a signed integer, as Kubernetes'
    // resource.Quantity reads it: "1e3", "5E-3", "2E+1".
    StatusOr<int> e = DecimalExponent(suffix);
    if (!e.ok()) return invalid;
    exp10 = *e;
  }
  int e = exp10 - fraction_digits + 3;
  size_t nz = digits.find_first_not_of('0');
  if (nz == std::string::npos) return 0;
  digits.erase(0, nz);
  while (digits.back() == '0') {
    digits.pop_back();
    ++e;
  }
  if (digits.size() > 18) return too_large;
  uint64_t m = 0;
  for (char c : digits) m = m * 10 + static_cast<uint64_t>(c - '0');
  for (int k = 0; k < exp2; ++k) {
    if (m > static_cast<uint64_t>(kInt64Max) / 2) return too_large;
    m *= 2;
  }
  for (; e > 0; --e) {
    if (m > static_cast<uint64_t>(kInt64Max) / 10) return too_large;
    m *= 10;
  }
  for (; e < 0 && m > 0; ++e) m /= 10;  // Repeated floor = one floor.
  return static_cast<int64_t>(m);
}

StatusOr<int64_t> PodResourceSlots(const Pod& pod,
                                   const std::string& resource) {
  int64_t milli = 0;
  for (const ContainerSpec& c : pod.spec_containers) {
    const char* where = "limits";
    auto it = c.limits.find(resource);
    if (it == c.limits.end()) {
      where = "requests";
      it = c.requests.find(resource);
      if (it == c.requests.end()) continue;
    }
    StatusOr<int64_t> q = QuantityMilli(it->second);
    if (!q.ok()) {
      return q.status().WithContext("container " + c.name + " resources." +
                                    where + "[" + resource + "]");
    }
    if (*q > kInt64Max - milli) {
      return InvalidArgumentError("sum of " + resource + " is too large");
    }
    milli += *q;
  }
  return milli / 1000;
}

}  // namespace k8s_agent::kube
