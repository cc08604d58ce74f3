// SPDX-License-Identifier: Apache-2.0
// NaturalLess: the one order of host and pod names ("w-2" before "w-10").

#ifndef K8S_AGENT_PLUGIN_BASE_NATURAL_ORDER_H_
#define K8S_AGENT_PLUGIN_BASE_NATURAL_ORDER_H_

#include <string_view>

namespace k8s_agent {

/// Compares names as people number them. A name is read as a sequence of
/// runs of ASCII digits and single other bytes, compared in turn:
///  - two digit runs by numeric value, of any length ("2" < "10",
///    "99999999999999999999" < "100000000000000000000"), leading zeros
///    ignored;
///  - anything else bytewise, as unsigned bytes (a digit run by its first
///    digit), so "w-1" < "w-a" and "w-1" < "w-1a";
///  - a name that ends first comes first ("w" < "w-0").
/// Names equal by those rules differ only in leading zeros; the first
/// digit run whose length differs decides, the longer (zero-padded) one
/// first: "w-01" < "w-1". So the order is total: NaturalCompare is 0 only
/// for equal names, and a sort gives one answer whatever its input order.
/// Returns <0, 0 or >0.
int NaturalCompare(std::string_view a, std::string_view b);

/// NaturalCompare(a, b) < 0: for std::sort and ordered containers.
bool NaturalLess(std::string_view a, std::string_view b);

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_BASE_NATURAL_ORDER_H_
