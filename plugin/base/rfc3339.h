// SPDX-License-Identifier: Apache-2.0
// RFC 3339 timestamps as the Kubernetes API writes them.

#ifndef K8S_AGENT_PLUGIN_BASE_RFC3339_H_
#define K8S_AGENT_PLUGIN_BASE_RFC3339_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace k8s_agent {

/// "2026-12-01T09:46:40Z", "2026-12-01T09:46:40.123456Z" or with a
/// "+01:00" offset -> microseconds since the Unix epoch; nullopt for
/// anything else. The API's metav1.Time has whole seconds; MicroTime and
/// hand-written objects may carry a fraction (digits past 6 are dropped).
std::optional<int64_t> ParseRfc3339Micros(std::string_view text);

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_BASE_RFC3339_H_
