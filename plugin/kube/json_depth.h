// SPDX-License-Identifier: Apache-2.0
// A pre-parse guard against deeply nested JSON from the API server.
#ifndef K8S_AGENT_PLUGIN_KUBE_JSON_DEPTH_H_
#define K8S_AGENT_PLUGIN_KUBE_JSON_DEPTH_H_

#include <string_view>

#include "plugin/base/status.h"

namespace k8s_agent::kube {

/// Deepest array/object nesting accepted in an API answer. A Pod nests
/// about 10 levels (managedFields' fieldsV1 a few more); 128 leaves room
/// for any real object.
inline constexpr int kMaxJsonDepth = 128;

/// Fails with kInternal if arrays/objects in `text` nest deeper than
/// `max_depth`, without parsing it. Why: nlohmann's DOM parser allocates
/// each level as it reads it (~300 bytes per '['), so a 16 MiB "[[[[..."
/// would cost gigabytes before the parse could fail. Brackets inside
/// strings are skipped; anything else malformed is left to the parser.
Status CheckJsonDepth(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_JSON_DEPTH_H_
